// The conversation: messages loaded from /messages, then replies folded from the event
// stream, block by block. Every reply is a ReplyView keyed by its reply id; a REPLY_START
// rebuilds its view from scratch, so replaying the log never duplicates anything.

import { renderMarkdown } from "./markdown.js";
import { applySubAgent, showNestedCall } from "./subagent.js";
import { ToolCard, outputText } from "./toolcard.js";

/** Performance marks of the first rendered token, for tests and the report. */
export const firstTokenTimings = [];

/** A block whose render took longer than this waits RENDER_GAP times as long before the next. */
const SLOW_RENDER_MS = 8;
const RENDER_GAP = 4;

class ReplyView {
  constructor(id, onLater, role) {
    this.id = id;
    this.onLater = onLater;
    this.timer = null;
    this.el = document.createElement("div");
    this.el.className = "msg assistant";
    this.el.dataset.msgId = id;
    this.el.dataset.role = role;
    this.blocks = new Map();
    this.cards = new Map();
    this.dirty = new Set();
    this.sawText = false;
  }

  reset() {
    this.el.replaceChildren();
    this.blocks.clear();
    this.cards.clear();
    this.dirty.clear();
    this.el.classList.remove("ended");
  }

  textBlock(id) {
    let block = this.blocks.get(id);
    if (!block) {
      block = { kind: "text", text: "", el: document.createElement("div") };
      block.el.className = "md";
      this.blocks.set(id, block);
      this.el.append(block.el);
    }
    return block;
  }

  thinkingBlock(id) {
    let block = this.blocks.get(id);
    if (!block) {
      const details = document.createElement("details");
      details.className = "thinking";
      const summary = document.createElement("summary");
      summary.textContent = "Thinking";
      const body = document.createElement("div");
      body.className = "thinking-text";
      details.append(summary, body);
      block = { kind: "thinking", text: "", el: details, body };
      this.blocks.set(id, block);
      this.el.append(details);
    }
    return block;
  }

  card(id, name) {
    let card = this.cards.get(id);
    if (!card) {
      card = new ToolCard(id, name || "tool");
      this.cards.set(id, card);
      this.el.append(card.el);
    }
    return card;
  }

  addText(id, delta) {
    const block = this.textBlock(id);
    block.text += delta;
    this.dirty.add(block);
  }

  addThinking(id, delta) {
    const block = this.thinkingBlock(id);
    block.text += delta;
    block.body.textContent = block.text;
  }

  notice(kind, text) {
    const p = document.createElement("p");
    p.className = `notice ${kind}`;
    p.setAttribute("role", kind === "error" ? "alert" : "note");
    p.textContent = text;
    this.el.append(p);
  }

  /**
   * Render the text blocks that changed. A block that renders slowly (a long message) is
   * rendered again only after a pause RENDER_GAP times its cost, so a stream of small
   * deltas never spends more than a fraction of the time re-rendering.
   */
  flush() {
    let had = false;
    for (const block of [...this.dirty]) {
      const start = performance.now();
      if (block.notBefore > start) {
        this.later(block.notBefore - start);
        continue;
      }
      block.el.replaceChildren(renderMarkdown(block.text));
      const cost = performance.now() - start;
      block.notBefore = cost > SLOW_RENDER_MS ? start + cost * (RENDER_GAP + 1) : 0;
      this.dirty.delete(block);
      had = true;
    }
    return had;
  }

  later(ms) {
    if (this.timer !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.onLater();
    }, ms);
  }

  fromMsg(msg) {
    this.reset();
    for (const block of msg.content || []) {
      if (block.type === "text") this.addText(block.id, block.text);
      else if (block.type === "thinking" && !block.redacted) this.addThinking(block.id, block.thinking);
      else if (block.type === "tool_call") this.card(block.id, block.name).setCall(block);
      else if (block.type === "tool_result") this.card(block.id, block.name).setResult(block);
      else if (block.type === "data") this.notice("info", `[${block.source?.media_type || "data"}]`);
    }
    this.flush();
    this.el.classList.add("ended");
  }
}

/** Closer to the bottom than this (px) counts as "at the latest": the view follows. */
const FOLLOW_SLACK = 48;

/**
 * The "Conversation" region's content. `hooks` get usage and plugin events; `jump` is the
 * "Jump to latest" button. The view follows new content while the reader is at the bottom
 * (also when the region shrinks, e.g. under a confirmation panel); once they scroll up it
 * stays put and offers the button instead.
 */
export class Conversation {
  constructor(root, hooks, jump) {
    this.root = root;
    this.hooks = hooks;
    this.jump = jump;
    this.views = new Map();
    this.batchArrived = 0;
    this.agentName = "Assistant";
    this.following = true;
    this.lastHeight = 0;
    root.addEventListener("scroll", () => this.onScroll(), { passive: true });
    jump.onclick = () => this.toLatest();
    new ResizeObserver(() => {
      if (this.following) this.root.scrollTop = this.root.scrollHeight;
    }).observe(root);
  }

  clear() {
    this.root.replaceChildren();
    this.views.clear();
    this.toLatest();
  }

  /** Show `el` (the agent's introduction) while the conversation is empty. */
  showIntro(el) {
    if (this.root.querySelector(".msg")) return;
    this.root.querySelector(":scope > .intro")?.remove();
    this.root.append(el);
  }

  dropIntro() {
    this.root.querySelector(":scope > .intro")?.remove();
  }

  onScroll() {
    const gap = this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight;
    if (gap <= FOLLOW_SLACK) this.toLatest(false);
    else if (this.root.scrollTop < this.lastTop) this.following = false; // the reader scrolled up
    this.lastTop = this.root.scrollTop;
    this.jump.hidden = this.following;
  }

  /** Scroll to the newest content and follow it again. */
  toLatest(scroll = true) {
    this.following = true;
    this.jump.hidden = true;
    if (scroll) this.root.scrollTop = this.root.scrollHeight;
    this.lastTop = this.root.scrollTop;
  }

  /** Render stored messages (oldest first), replacing what is shown. */
  showMessages(msgs) {
    this.clear();
    for (const msg of msgs) this.addMessage(msg);
    this.scroll(true);
  }

  /** Render older messages above what is shown. */
  prependMessages(msgs) {
    const anchor = this.root.firstChild;
    const height = this.root.scrollHeight;
    for (const msg of msgs) this.addMessage(msg, anchor);
    this.root.scrollTop += this.root.scrollHeight - height;
  }

  addMessage(msg, before = null) {
    if (msg.role === "assistant") {
      const view = this.view(msg.id);
      view.fromMsg(msg);
      if (before) this.root.insertBefore(view.el, before);
    } else if (msg.role === "user") {
      const text = (msg.content || [])
        .map((b) => (b.type === "text" ? b.text : b.type === "tool_result" ? outputText(b.output) : ""))
        .filter(Boolean)
        .join("\n");
      if (text) this.addUserText(text, msg.id, before);
    }
  }

  /** Show a message the user sent (`queued`: typed ahead, sent when the reply ends). */
  addUserText(text, id, before = null, queued = false) {
    this.dropIntro();
    const div = document.createElement("div");
    div.className = queued ? "msg user queued" : "msg user";
    div.dataset.role = queued ? "You · queued" : "You";
    if (id) div.dataset.msgId = id;
    div.append(renderMarkdown(text));
    this.root.insertBefore(div, before);
    if (!before) this.scroll(true);
    return div;
  }

  view(id) {
    let view = this.views.get(id);
    if (!view) {
      this.dropIntro();
      view = new ReplyView(id, () => this.flush(), this.agentName);
      this.views.set(id, view);
      this.root.append(view.el);
    }
    return view;
  }

  /** Fold one event into the conversation. */
  apply(ev) {
    const view = this.view(ev.reply_id);
    switch (ev.type) {
      case "reply_start":
        view.reset(); // replaying the log rebuilds the reply in place, never twice
        break;
      case "text_block_delta":
        if (!view.sawText) this.markFirstDelta(view);
        view.addText(ev.block_id, ev.delta);
        break;
      case "text_block_start":
        view.textBlock(ev.block_id);
        break;
      case "thinking_block_start":
        view.thinkingBlock(ev.block_id);
        break;
      case "thinking_block_delta":
        view.addThinking(ev.block_id, ev.delta);
        break;
      case "tool_call_start":
        view.card(ev.block_id, ev.name);
        break;
      case "tool_call_delta":
        view.card(ev.block_id).appendArgs(ev.delta);
        break;
      case "tool_call_end":
        view.card(ev.block_id, ev.tool_call.name).setCall(ev.tool_call);
        break;
      case "tool_result_start":
        view.card(ev.block_id, ev.name).startRun();
        break;
      case "tool_result_text_delta":
        view.card(ev.block_id).appendOutput(ev.delta);
        break;
      case "tool_result_end":
        view.card(ev.block_id, ev.tool_result.name).setResult(ev.tool_result);
        break;
      case "sub_agent":
        applySubAgent(view, ev);
        break;
      default:
        this.applyOther(view, ev);
    }
  }

  applyOther(view, ev) {
    switch (ev.type) {
      case "require_user_confirm":
      case "require_external_execution": {
        const state = ev.type === "require_user_confirm" ? "asking" : "external";
        for (const call of ev.tool_calls) {
          if (showNestedCall(view, call, state)) continue;
          const card = view.card(call.id, call.name);
          card.setCall(call);
          card.setState(state);
        }
        break;
      }
      case "model_call_end":
        if (ev.usage) this.hooks.onUsage(ev.usage);
        break;
      case "model_retry":
        view.notice("retry", `${ev.model_name} failed (attempt ${ev.attempt}: ${ev.error}); retrying with ${ev.next_model_name} in ${ev.delay.toFixed(1)} s`);
        break;
      case "context_compressed":
        view.notice("info", `Context compressed: ${ev.before_tokens} → ${ev.after_tokens} tokens (${ev.compressed_messages} messages ${ev.summarised ? "summarised" : "dropped"})`);
        break;
      case "plugin_activated":
      case "plugin_slept":
        this.hooks.onPlugin(ev);
        break;
      case "error":
        view.notice("error", `${ev.error_type}: ${ev.message}`);
        view.el.classList.add("ended");
        break;
      case "reply_end":
        for (const card of view.cards.values()) {
          if (["pending", "asking", "external", "running"].includes(card.state)) card.setState("interrupted");
        }
        view.el.classList.add("ended");
        break;
      default:
        break;
    }
  }

  markFirstDelta(view) {
    view.sawText = true;
    view.pendingMark = this.batchArrived || performance.now();
  }

  /** Render what changed since the last flush (once per network chunk). */
  flush() {
    let rendered = false;
    for (const view of this.views.values()) {
      if (!view.flush()) continue;
      rendered = true;
      if (view.pendingMark !== undefined) this.recordFirstToken(view);
    }
    this.scroll(false); // text, tool output or a new card: follow it (or offer the jump)
  }

  recordFirstToken(view) {
    const start = view.pendingMark;
    view.pendingMark = undefined;
    const domReady = performance.now();
    requestAnimationFrame(() => {
      const painted = performance.now();
      const entry = { reply_id: view.id, dom_ms: domReady - start, frame_ms: painted - start };
      performance.measure(`tether:first-token:${view.id}`, { start, end: painted });
      firstTokenTimings.push(entry);
    });
  }

  /** New content: follow it if the reader is at the latest (or `force`), else offer the jump. */
  scroll(force) {
    if (force) this.toLatest();
    else if (this.following) this.root.scrollTop = this.root.scrollHeight;
    else this.jump.hidden = false;
  }
}
