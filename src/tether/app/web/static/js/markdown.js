// Markdown rendered by markdown-it (vendored, see vendor/THIRD-PARTY.md) with raw HTML off:
// its tokens are walked into DOM nodes (text nodes and allow-listed elements, never HTML
// strings), so text from the model or a tool can never inject markup. Links keep only
// http(s) and mailto targets; images become links (nothing is loaded from elsewhere).
// markdown-it parses in time linear in its input; code is highlighted by a linear scanner.
// The cost of one message is bounded besides: past MARKDOWN_CHARS characters or
// MAX_ELEMENTS elements the rest is shown as plain text, so no message can freeze the tab.

import markdownit from "../vendor/markdown-it/markdown-it.esm.min.js";
import { highlight } from "./highlight.js";

const SAFE_URL = /^(https?:|mailto:)/i;
const TAGS = new Set([
  "p", "h1", "h2", "h3", "h4", "h5", "h6", "ul", "ol", "li", "blockquote", "em", "strong", "s",
  "a", "table", "thead", "tbody", "tr", "th", "td", "code", "pre", "hr", "br",
]);
const LANG = /^[\w+#.-]{1,30}$/;
const ALIGN = /text-align:\s*(left|right|center)/;

/** Text past this many characters is not parsed as Markdown (shown as plain text). */
export const MARKDOWN_CHARS = 100_000;
/** Nodes one message may create (twice this at most); past that, blocks become plain text. */
export const MAX_ELEMENTS = 10_000;

const md = markdownit("default", { html: false, linkify: false, typographer: false });
md.validateLink = (url) => SAFE_URL.test(url.trim());

/** Is `url` a target a rendered link may have (http, https or mailto)? */
export function safeUrl(url) {
  return typeof url === "string" && SAFE_URL.test(url.trim());
}

/** Render `text` as Markdown into a DocumentFragment. */
export function renderMarkdown(text) {
  const frag = document.createDocumentFragment();
  let head = text;
  if (text.length > MARKDOWN_CHARS) {
    const cut = text.lastIndexOf("\n", MARKDOWN_CHARS);
    head = text.slice(0, cut > 0 ? cut + 1 : MARKDOWN_CHARS);
  }
  const lines = head.split("\n");
  const budget = { elements: MAX_ELEMENTS };
  const stopped = walk(md.parse(head, {}), frag, budget);
  const rest = (stopped === null ? "" : lines.slice(stopped).join("\n")) + text.slice(head.length);
  if (rest) frag.append(plainRest(rest));
  return frag;
}

/** The part of a message not rendered as Markdown, as plain text (line breaks kept). */
function plainRest(text) {
  const p = document.createElement("p");
  p.className = "md-rest";
  p.textContent = text;
  return p;
}

/** Walk `tokens` into `root`; returns the source line where the budget ran out, or null. */
function walk(tokens, root, budget) {
  const stack = [root];
  for (const token of tokens) {
    const parent = stack[stack.length - 1];
    if (token.level === 0 && token.nesting !== -1 && token.map && budget.elements <= 0) {
      return token.map[0]; // a new top-level block past the budget: the rest is plain text
    }
    if (token.nesting === 1) {
      // Tight lists hide their <p>; an element past twice the budget is flattened.
      const node = token.hidden || budget.elements < -MAX_ELEMENTS ? parent : open(token);
      budget.elements -= 1;
      if (node !== parent) parent.append(node);
      stack.push(node);
    } else if (token.nesting === -1) {
      if (stack.length > 1) stack.pop();
    } else {
      leaf(token, parent, budget);
    }
  }
  return null;
}

function open(token) {
  let tag = TAGS.has(token.tag) ? token.tag : "span";
  if (/^h[1-6]$/.test(tag)) tag = `h${Math.min(Number(tag[1]) + 2, 6)}`; // under the page's h1/h2
  if (tag === "a" && !safeUrl(token.attrGet("href"))) tag = "span";
  const node = document.createElement(tag);
  if (tag === "a") {
    node.href = token.attrGet("href").trim();
    node.rel = "noopener noreferrer";
    node.target = "_blank";
    const title = token.attrGet("title");
    if (title) node.title = title;
  } else if (tag === "ol") {
    const start = Number(token.attrGet("start"));
    if (Number.isInteger(start)) node.start = start;
  } else if (tag === "th" || tag === "td") {
    const align = ALIGN.exec(token.attrGet("style") || "");
    if (align) node.className = `align-${align[1]}`;
  }
  return node;
}

function leaf(token, parent, budget) {
  budget.elements -= 1;
  switch (token.type) {
    case "inline":
      walk(token.children || [], parent, budget);
      break;
    case "softbreak":
    case "hardbreak":
      parent.append(document.createElement("br"));
      break;
    case "code_inline":
      parent.append(el("code", token.content));
      break;
    case "fence":
    case "code_block":
      parent.append(codeBlock(token));
      break;
    case "hr":
      parent.append(document.createElement("hr"));
      break;
    case "image":
      parent.append(image(token));
      break;
    default:
      if (token.content) parent.append(document.createTextNode(token.content));
  }
}

function codeBlock(token) {
  const pre = document.createElement("pre");
  const code = document.createElement("code");
  const lang = (token.info || "").trim().split(/\s+/, 1)[0].toLowerCase();
  if (LANG.test(lang)) code.dataset.lang = lang;
  code.append(highlight(token.content.replace(/\n$/, ""), lang));
  pre.append(code);
  return pre;
}

function image(token) {
  const src = token.attrGet("src");
  const label = `[image: ${token.content || src || ""}]`;
  if (!safeUrl(src)) return document.createTextNode(label);
  const a = el("a", label);
  a.href = src.trim();
  a.rel = "noopener noreferrer";
  a.target = "_blank";
  return a;
}

function el(tag, text) {
  const node = document.createElement(tag);
  node.textContent = text;
  return node;
}
