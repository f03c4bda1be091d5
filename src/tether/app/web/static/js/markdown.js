// A small Markdown renderer that builds DOM nodes (never HTML strings), so text from the
// model or a tool can never inject markup. Supports: ATX headings, fenced code (highlighted),
// paragraphs, bullet and numbered lists, block quotes, horizontal rules, inline code,
// **bold**, *italic*, ~~strike~~ and [links](https://...) with http(s)/mailto targets only.

import { highlight } from "./highlight.js";

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w+#.-]*)\s*$/;
const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^\s*[-*+]\s+(.*)$/;
const ORDERED = /^\s*(\d{1,9})[.)]\s+(.*)$/;
const QUOTE = /^\s*>\s?(.*)$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
const SAFE_URL = /^(https?:|mailto:)/i;

/** Render `text` as Markdown into a DocumentFragment. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  const lines = text.split(/\r?\n/);
  let i = 0;
  while (i < lines.length) {
    i = renderBlock(lines, i, frag);
  }
  return frag;
}

function renderBlock(lines, i, parent) {
  const line = lines[i];
  const fence = FENCE.exec(line);
  if (fence) return renderFence(lines, i, fence, parent);
  if (!line.trim()) return i + 1;
  const heading = HEADING.exec(line);
  if (heading) {
    const h = el(`h${Math.min(heading[1].length + 2, 6)}`);
    renderInline(heading[2], h);
    parent.append(h);
    return i + 1;
  }
  if (RULE.test(line)) {
    parent.append(el("hr"));
    return i + 1;
  }
  if (QUOTE.test(line)) {
    const quoted = [];
    while (i < lines.length && QUOTE.test(lines[i])) quoted.push(QUOTE.exec(lines[i++])[1]);
    const q = el("blockquote");
    q.append(renderMarkdown(quoted.join("\n")));
    parent.append(q);
    return i;
  }
  if (BULLET.test(line) || ORDERED.test(line)) return renderList(lines, i, parent);
  const para = [];
  while (i < lines.length && lines[i].trim() && !startsBlock(lines[i])) para.push(lines[i++]);
  const p = el("p");
  renderInline(para.join("\n"), p);
  parent.append(p);
  return i;
}

function startsBlock(line) {
  return (
    FENCE.test(line) || HEADING.test(line) || QUOTE.test(line) || BULLET.test(line) ||
    ORDERED.test(line) || RULE.test(line)
  );
}

function renderFence(lines, i, fence, parent) {
  const marker = fence[2];
  const body = [];
  i += 1;
  while (i < lines.length && !lines[i].trim().startsWith(marker)) body.push(lines[i++]);
  const pre = el("pre");
  const code = el("code");
  const lang = fence[3].toLowerCase();
  if (lang) code.dataset.lang = lang;
  code.append(highlight(body.join("\n"), lang));
  pre.append(code);
  parent.append(pre);
  return i + 1; // skip the closing fence (or run past the end while it streams)
}

function renderList(lines, i, parent) {
  const ordered = ORDERED.test(lines[i]) && !BULLET.test(lines[i]);
  const list = el(ordered ? "ol" : "ul");
  if (ordered) list.start = Number(ORDERED.exec(lines[i])[1]);
  const pattern = ordered ? ORDERED : BULLET;
  while (i < lines.length && pattern.test(lines[i])) {
    const m = pattern.exec(lines[i++]);
    const item = [ordered ? m[2] : m[1]];
    while (i < lines.length && /^\s{2,}\S/.test(lines[i]) && !pattern.test(lines[i])) {
      item.push(lines[i++].trim());
    }
    const li = el("li");
    renderInline(item.join("\n"), li);
    list.append(li);
  }
  parent.append(list);
  return i;
}

const INLINE = /(`+)([\s\S]*?[^`])\1(?!`)|\*\*([\s\S]+?)\*\*|__([\s\S]+?)__|~~([\s\S]+?)~~|\*([^*\s][\s\S]*?)\*|\b_([^_\s][\s\S]*?)_\b|\[([^\]\n]+)\]\(([^)\s]+)\)/g;

/** Append the inline Markdown of `text` to `parent` as DOM nodes. */
export function renderInline(text, parent) {
  let last = 0;
  for (const m of text.matchAll(INLINE)) {
    if (m.index > last) appendText(parent, text.slice(last, m.index));
    last = m.index + m[0].length;
    if (m[1]) {
      parent.append(el("code", m[2].replace(/^ (.*) $/s, "$1")));
    } else if (m[3] || m[4]) {
      const b = el("strong");
      renderInline(m[3] || m[4], b);
      parent.append(b);
    } else if (m[5]) {
      const s = el("del");
      renderInline(m[5], s);
      parent.append(s);
    } else if (m[6] || m[7]) {
      const e = el("em");
      renderInline(m[6] || m[7], e);
      parent.append(e);
    } else {
      parent.append(link(m[8], m[9]));
    }
  }
  if (last < text.length) appendText(parent, text.slice(last));
}

function link(label, href) {
  if (!SAFE_URL.test(href)) return document.createTextNode(`[${label}](${href})`);
  const a = el("a");
  a.href = href;
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  renderInline(label, a);
  return a;
}

function appendText(parent, text) {
  const parts = text.split("\n");
  parts.forEach((part, n) => {
    if (n > 0) parent.append(el("br"));
    if (part) parent.append(document.createTextNode(part));
  });
}

function el(tag, text) {
  const node = document.createElement(tag);
  if (text !== undefined) node.textContent = text;
  return node;
}
