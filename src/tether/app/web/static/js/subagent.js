// A sub-agent's work inside the tool card of the call that started it: a collapsible box
// (role=group, "<name> sub-agent") with its own text and tool cards, streamed from the
// parent's `sub_agent` events; a grandchild's box sits in its parent's card, and so on.

import { ToolCard } from "./toolcard.js";

class SubAgentBox {
  constructor(name) {
    this.name = name;
    this.el = document.createElement("details");
    this.el.className = "subagent";
    this.el.open = true;
    this.el.setAttribute("role", "group");
    this.el.setAttribute("aria-label", `${name} sub-agent`);
    const summary = document.createElement("summary");
    summary.textContent = `${name} (sub-agent) `;
    this.status = document.createElement("span");
    this.status.className = "state";
    summary.append(this.status);
    this.body = document.createElement("div");
    this.body.className = "subagent-body";
    this.el.append(summary, this.body);
    this.cards = new Map();
    this.texts = new Map();
  }

  card(id, name) {
    let card = this.cards.get(id);
    if (!card) {
      card = new ToolCard(id, name || "tool");
      this.cards.set(id, card);
      this.body.append(card.el);
    }
    return card;
  }

  text(id) {
    let p = this.texts.get(id);
    if (!p) {
      p = document.createElement("p");
      p.className = "subagent-text";
      this.texts.set(id, p);
      this.body.append(p);
    }
    return p;
  }

  apply(ev) {
    switch (ev.type) {
      case "reply_start":
        this.body.replaceChildren();
        this.cards.clear();
        this.texts.clear();
        this.status.textContent = "working";
        break;
      case "text_block_delta":
        this.text(ev.block_id).append(document.createTextNode(ev.delta));
        break;
      case "tool_call_start":
        this.card(ev.block_id, ev.name);
        break;
      case "tool_call_end":
        this.card(ev.block_id, ev.tool_call.name).setCall(ev.tool_call);
        break;
      case "tool_result_start":
        this.card(ev.block_id, ev.name).startRun();
        break;
      case "tool_result_text_delta":
        this.card(ev.block_id).appendOutput(ev.delta);
        break;
      case "tool_result_end":
        this.card(ev.block_id, ev.tool_result.name).setResult(ev.tool_result);
        break;
      case "require_user_confirm":
      case "require_external_execution":
        this.status.textContent = "waiting for you";
        break;
      case "reply_end":
        this.status.textContent = "done";
        break;
      default:
        break;
    }
  }
}

function boxIn(card, name) {
  if (!card.subagent) {
    card.subagent = new SubAgentBox(name);
    card.el.append(card.subagent.el);
  }
  return card.subagent;
}

/** Fold a `sub_agent` event into the reply view `view` (which has `card(id, name)`). */
export function applySubAgent(view, ev) {
  let owner = view;
  for (let i = 0; i < ev.agent_path.length; i++) {
    owner = boxIn(owner.card(ev.call_path[i], ev.agent_path[i]), ev.agent_path[i]);
  }
  owner.apply(ev.event);
}

/**
 * Show a paused call whose id is qualified (`parent_call/child_call`) in its sub-agent's
 * box; returns false for the reply's own calls.
 */
export function showNestedCall(view, call, state) {
  const ids = call.id.split("/");
  if (ids.length < 2) return false;
  const path = (call.metadata && call.metadata.agent_path) || [];
  let owner = view;
  for (let i = 0; i < ids.length - 1; i++) {
    const name = path[i] || "sub-agent";
    owner = boxIn(owner.card(ids[i], name), name);
  }
  const card = owner.card(ids[ids.length - 1], call.name);
  card.setCall({ ...call, id: ids[ids.length - 1] });
  card.setState(state);
  return true;
}
