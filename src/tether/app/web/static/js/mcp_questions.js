// An MCP server's questions while a tool call waits: an elicitation as a form built from its
// JSON schema (defaults filled in), a URL-mode elicitation as a link, a sampling request as
// Allow / Refuse. Answers go to POST /v1/sessions/{id}/mcp-requests/{request_id}. Every
// text the server sent is shown as text, never as HTML.

import { json } from "./api.js";

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children);
  return node;
}

const INPUT_TYPES = { email: "email", uri: "url", date: "date", "date-time": "datetime-local" };

/** The choices of an enum field: [{value, label}], or [] for a free field. */
function choicesOf(spec) {
  if (Array.isArray(spec.enum)) return spec.enum.map((v, i) => ({ value: String(v), label: String((spec.enumNames || [])[i] ?? v) }));
  const options = spec.oneOf || spec.anyOf;
  if (Array.isArray(options)) return options.filter((o) => o && "const" in o).map((o) => ({ value: String(o.const), label: String(o.title ?? o.const) }));
  if (spec.items && typeof spec.items === "object") return choicesOf(spec.items);
  return [];
}

/** One form field: {box, read()} where read() gives [present, value] or throws a message. */
function fieldOf(name, spec, required) {
  const title = String(spec.title || name) + (required ? " *" : "");
  const choices = choicesOf(spec);
  const caption = spec.description ? el("span", { className: "caption", textContent: ` ${spec.description}` }) : "";
  if (spec.type === "boolean") {
    const box = el("input", { type: "checkbox", checked: spec.default === true, name });
    return { box: el("label", { className: "check" }, box, ` ${title}`, caption), read: () => [true, box.checked] };
  }
  if (spec.type === "array" && choices.length) {
    const picked = new Set(Array.isArray(spec.default) ? spec.default.map(String) : []);
    const boxes = choices.map((c) => ({ c, box: el("input", { type: "checkbox", checked: picked.has(c.value) }) }));
    const set = el("fieldset", { className: "pending-call" }, el("legend", { textContent: title }), caption);
    for (const b of boxes) set.append(el("label", { className: "check" }, b.box, ` ${b.c.label}`));
    return { box: set, read: () => [true, boxes.filter((b) => b.box.checked).map((b) => b.c.value)] };
  }
  let input;
  if (choices.length) {
    input = el("select", { name, required });
    if (!required) input.append(el("option", { value: "", textContent: "—" }));
    for (const c of choices) input.append(el("option", { value: c.value, textContent: c.label, selected: String(spec.default) === c.value }));
  } else {
    const numeric = spec.type === "number" || spec.type === "integer";
    input = el("input", { name, required, type: numeric ? "number" : INPUT_TYPES[spec.format] || "text" });
    if (numeric) input.step = spec.type === "integer" ? "1" : "any";
    for (const key of ["minimum", "maximum"]) if (typeof spec[key] === "number") input[key.slice(0, 3)] = String(spec[key]);
    if (typeof spec.maxLength === "number") input.maxLength = spec.maxLength;
    if (spec.default !== undefined && spec.default !== null) input.value = String(spec.default);
  }
  const read = () => {
    const text = input.value.trim();
    if (!text) {
      if (required) throw new Error(`${spec.title || name} is required`);
      return [false, undefined];
    }
    if (spec.type === "integer" || spec.type === "number") {
      const value = Number(text);
      if (!Number.isFinite(value) || (spec.type === "integer" && !Number.isInteger(value))) throw new Error(`${spec.title || name}: not a valid ${spec.type}`);
      return [true, value];
    }
    return [true, text];
  };
  return { box: el("label", { className: "field" }, title, caption, input), read };
}

function safeLink(url) {
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.href : null;
  } catch {
    return null;
  }
}

/** Shows the questions of the session's running reply; `sessionId()` names the session. */
export class ServerQuestions {
  constructor(before, sessionId) {
    this.root = el("div", { id: "mcp-questions", hidden: true });
    this.root.setAttribute("aria-live", "polite");
    this.root.style.cssText = "border-top: 1px solid var(--line); padding: .6rem var(--gutter); background: var(--panel); max-height: 45vh; overflow-y: auto;";
    before.before(this.root);
    this.sessionId = sessionId;
    this.shown = new Map(); // request_id -> section
  }

  /** Show `ev` if it is a server's question; a reply that ends or pauses drops them all. */
  see(ev) {
    if (ev.type === "reply_end" || ev.type === "error" || ev.type.startsWith("require_")) return this.clear();
    if (ev.type !== "custom" || !ev.data || !ev.data.request_id) return;
    if (ev.name === "mcp_elicitation_request") this.add(ev.data, this.elicitation(ev.data));
    else if (ev.name === "mcp_sampling_request") this.add(ev.data, this.sampling(ev.data));
  }

  clear() {
    this.root.replaceChildren();
    this.root.hidden = true;
    this.shown.clear();
  }

  add(data, section) {
    if (this.shown.has(data.request_id)) return;
    this.shown.set(data.request_id, section);
    this.root.append(section);
    this.root.hidden = false;
    section.querySelector("input, select, button")?.focus({ preventScroll: true });
  }

  done(data) {
    this.shown.get(data.request_id)?.remove();
    this.shown.delete(data.request_id);
    if (!this.shown.size) this.root.hidden = true;
  }

  async answer(data, body, buttons, error) {
    for (const b of buttons) b.disabled = true;
    error.textContent = "";
    try {
      const id = encodeURIComponent(this.sessionId());
      await json("POST", `/v1/sessions/${id}/mcp-requests/${encodeURIComponent(data.request_id)}`, body);
      this.done(data);
    } catch (err) {
      error.textContent = err.message || String(err);
      for (const b of buttons) b.disabled = false;
    }
  }

  elicitation(data) {
    const error = el("p", { className: "form-error", role: "alert" });
    const heading = el("h2", { textContent: `${data.server} asks` });
    const message = el("p", { textContent: data.message || "" });
    const decline = el("button", { type: "button", className: "deny", textContent: "Decline" });
    const cancel = el("button", { type: "button", textContent: "Cancel" });
    let accept;
    let fields = [];
    const body = [];
    if (data.mode === "url") {
      const href = safeLink(data.url || "");
      body.push(href ? el("p", {}, el("a", { href, target: "_blank", rel: "noopener noreferrer", textContent: href })) : el("p", { textContent: data.url || "" }));
      accept = el("button", { type: "button", className: "allow", textContent: "Done" });
    } else {
      const schema = data.requested_schema || {};
      const required = new Set(schema.required || []);
      fields = Object.entries(schema.properties || {}).map(([name, spec]) => ({ name, ...fieldOf(name, spec || {}, required.has(name)) }));
      body.push(...fields.map((f) => f.box));
      accept = el("button", { type: "submit", className: "allow", textContent: "Submit" });
    }
    const buttons = [accept, decline, cancel];
    const form = el("form", { className: "pending-box", noValidate: true }, heading, message, ...body, error, el("div", { className: "actions" }, ...buttons));
    form.setAttribute("aria-label", `Question from ${data.server}`);
    const submit = () => {
      if (data.mode === "url") return this.answer(data, { action: "accept" }, buttons, error);
      const content = {};
      try {
        for (const f of fields) {
          const [present, value] = f.read();
          if (present) content[f.name] = value;
        }
      } catch (err) {
        error.textContent = err.message;
        return;
      }
      this.answer(data, { action: "accept", content }, buttons, error);
    };
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      submit();
    });
    if (data.mode === "url") accept.onclick = submit;
    decline.onclick = () => this.answer(data, { action: "decline" }, buttons, error);
    cancel.onclick = () => this.answer(data, { action: "cancel" }, buttons, error);
    return form;
  }

  sampling(data) {
    const error = el("p", { className: "form-error", role: "alert" });
    const allow = el("button", { type: "button", className: "allow", textContent: "Let the model answer" });
    const refuse = el("button", { type: "button", className: "deny", textContent: "Refuse" });
    const buttons = [allow, refuse];
    allow.onclick = () => this.answer(data, { approved: true }, buttons, error);
    refuse.onclick = () => this.answer(data, { approved: false }, buttons, error);
    const text = el("pre", { textContent: data.text || "" });
    const box = el("section", { className: "pending-box" }, el("h2", { textContent: `${data.server} wants the model to answer` }), text, error, el("div", { className: "actions" }, ...buttons));
    box.setAttribute("aria-label", `Sampling request from ${data.server}`);
    return box;
  }
}
