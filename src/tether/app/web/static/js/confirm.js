// The pending panel: what a paused reply waits for. Calls awaiting confirmation get
// Allow once / Allow always (with the suggested rules as checkboxes) / Deny (with an optional
// reason the model sees) and an editable input; external calls get a form to paste their
// result. Answers are the library's resume events: UserConfirmResultEvent and
// ExternalExecutionResultEvent. A sub-agent's call (its `metadata.agent_path` set) names
// the sub-agent ("scout wants to run Bash(ls)") and offers to remember its rules in the
// parent agents too (`rules_scope: "agent_and_parents"`).

import { argumentsElement } from "./toolcard.js";

/** The text form of a permission rule: `Tool` or `Tool(specifier)`. */
export function ruleText(rule) {
  return rule.rule_content == null ? rule.tool_name : `${rule.tool_name}(${rule.rule_content})`;
}

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children);
  return node;
}

/** The sub-agents a call belongs to, outermost first (empty for the agent's own call). */
export function agentPath(call) {
  const path = (call.metadata || {}).agent_path;
  return Array.isArray(path) ? path.map(String) : [];
}

/** `Bash(ls -la)`, `Write(notes.md)` or the bare name: what a question names. */
function callSummary(call) {
  let args = {};
  try {
    args = JSON.parse(call.input || "{}") || {};
  } catch {
    return call.name;
  }
  const detail = [args.command, args.file_path, args.path, args.url].find((v) => typeof v === "string");
  if (!detail) return call.name;
  const short = detail.length > 80 ? `${detail.slice(0, 79)}…` : detail;
  return `${call.name}(${short})`;
}

/** What a call's legend says: the tool, or "<sub-agent> wants to run <summary>". */
export function callTitle(call) {
  const path = agentPath(call);
  return path.length ? `${path.join(" › ")} wants to run ${callSummary(call)}` : call.name;
}

function labelled(input, text) {
  const label = el("label", { className: "check" }, input, ` ${text}`);
  return label;
}

/** Builds the confirmation and external-result forms; `submit(event)` posts an answer. */
export class PendingPanel {
  constructor(root, submit) {
    this.root = root;
    this.submit = submit;
    this.clear();
  }

  clear() {
    this.root.replaceChildren();
    this.root.hidden = true;
    this.confirmEvent = null;
    this.externalEvent = null;
  }

  /** Is a pause being shown? */
  get active() {
    return !this.root.hidden;
  }

  showConfirm(ev) {
    this.confirmEvent = ev;
    const rows = ev.tool_calls.map((call) => this.confirmRow(call, ev.tool_calls.length > 1));
    const error = el("p", { className: "form-error", role: "alert" });
    const anyRules = ev.tool_calls.some((c) => (c.suggested_rules || []).length);
    const once = el("button", { type: "button", className: "allow", textContent: "Allow once" });
    const always = el("button", { type: "button", className: "allow", textContent: "Allow always", disabled: !anyRules });
    if (!anyRules) always.title = "No rule was suggested for these calls";
    const deny = el("button", { type: "button", className: "deny", textContent: "Deny" });
    const buttons = [once, always, deny];
    const reason = el("input", { type: "text", className: "deny-reason", maxLength: 2000, placeholder: "Tell the agent why (optional)" });
    const answer = (mode) => this.answerConfirm(ev, rows, mode, buttons, error, reason.value.trim());
    once.onclick = () => answer("once");
    always.onclick = () => answer("always");
    deny.onclick = () => answer("deny");
    const nested = ev.tool_calls.length === 1 ? agentPath(ev.tool_calls[0]) : [];
    const heading = ev.tool_calls.length > 1
      ? `${ev.tool_calls.length} calls need your confirmation`
      : nested.length ? `The ${nested[nested.length - 1]} sub-agent needs your confirmation` : "A call needs your confirmation";
    once.setAttribute("aria-keyshortcuts", "y");
    always.setAttribute("aria-keyshortcuts", "a");
    deny.setAttribute("aria-keyshortcuts", "n");
    const keys = el("p", { className: "caption keys", textContent: "Keys: y allow once · a allow always · n deny" });
    const form = el("section", { className: "pending-box", tabIndex: -1 }, el("h2", { textContent: heading }), ...rows.map((r) => r.box), error, el("label", { className: "field" }, "Reason for denying (optional)", reason), el("div", { className: "actions" }, ...buttons), keys);
    form.setAttribute("aria-label", "Confirmation");
    form.addEventListener("keydown", (e) => {
      if (e.target.closest("input[type=text], textarea, summary") || e.ctrlKey || e.metaKey || e.altKey) return;
      const button = { y: once, a: always, n: deny }[e.key.toLowerCase()];
      if (!button || button.disabled) return;
      e.preventDefault();
      button.click();
    });
    this.root.append(form);
    this.root.hidden = false;
    once.focus({ preventScroll: true });
  }

  confirmRow(call, several) {
    const box = el("fieldset", { className: "pending-call" }, el("legend", { textContent: callTitle(call) }));
    box.append(argumentsElement(call.name, call.input));
    const include = el("input", { type: "checkbox", checked: true });
    if (several) box.append(labelled(include, `Allow this ${call.name} call`));
    const input = el("textarea", { className: "edit-input", rows: 4, value: prettyInput(call.input), spellcheck: false });
    input.setAttribute("aria-label", `Input of ${call.name}`);
    box.append(el("details", {}, el("summary", { textContent: "Edit input" }), input));
    const rules = (call.suggested_rules || []).map((rule) => ({ rule, box: el("input", { type: "checkbox", checked: true }) }));
    if (rules.length) {
      const list = el("div", { className: "rules" }, el("p", { className: "caption", textContent: "Allow always remembers:" }));
      for (const r of rules) list.append(labelled(r.box, ruleText(r.rule)));
      box.append(list);
    }
    const parents = el("input", { type: "checkbox", checked: false });
    if (rules.length && agentPath(call).length) {
      box.append(labelled(parents, "Also remember these rules in the parent agents"));
    }
    return { call, box, include, input, rules, parents };
  }

  async answerConfirm(ev, rows, mode, buttons, error, reason) {
    error.textContent = "";
    const results = [];
    for (const row of rows) {
      const confirmed = mode !== "deny" && row.include.checked;
      let input = row.call.input;
      if (confirmed && row.input.value.trim() !== prettyInput(row.call.input).trim()) {
        input = compactInput(row.input.value);
        if (input === null) {
          error.textContent = `The input of ${row.call.name} is not a JSON object; fix it or deny the call.`;
          return;
        }
      }
      const rules = confirmed && mode === "always" ? row.rules.filter((r) => r.box.checked).map((r) => r.rule) : [];
      const answer = { confirmed, tool_call: { ...row.call, input }, rules };
      if (rules.length && row.parents.checked) answer.rules_scope = "agent_and_parents";
      if (!confirmed && reason) answer.reason = reason;
      results.push(answer);
    }
    await this.send({ type: "user_confirm_result", reply_id: ev.reply_id, confirm_results: results }, buttons, error);
  }

  showExternal(ev) {
    this.externalEvent = ev;
    const rows = ev.tool_calls.map((call) => {
      const box = el("fieldset", { className: "pending-call" }, el("legend", { textContent: call.name }));
      box.append(argumentsElement(call.name, call.input));
      const output = el("textarea", { className: "result-input", rows: 4, spellcheck: false, placeholder: "What the call returned" });
      const label = el("label", { className: "field" }, `Result of ${call.name} (run it yourself, then paste what it returned)`, output);
      const failed = el("input", { type: "checkbox" });
      box.append(label, labelled(failed, "The call failed"));
      return { call, box, output, failed };
    });
    const error = el("p", { className: "form-error", role: "alert" });
    const button = el("button", { type: "button", className: "allow", textContent: "Submit result" });
    button.onclick = () => {
      const results = rows.map((r) => ({
        type: "tool_result",
        id: r.call.id,
        name: r.call.name,
        output: r.output.value,
        state: r.failed.checked ? "error" : "success",
      }));
      this.send({ type: "external_execution_result", reply_id: ev.reply_id, execution_results: results }, [button], error);
    };
    const heading = rows.length > 1 ? "These calls run outside the agent: paste their results" : "This call runs outside the agent: paste its result";
    const form = el("section", { className: "pending-box" }, el("h2", { textContent: heading }), ...rows.map((r) => r.box), error, el("div", { className: "actions" }, button));
    form.setAttribute("aria-label", "External tool results");
    this.root.append(form);
    this.root.hidden = false;
  }

  async send(event, buttons, error) {
    for (const b of buttons) b.disabled = true;
    try {
      await this.submit(event);
    } catch (err) {
      error.textContent = err.message || String(err);
      for (const b of buttons) b.disabled = false;
    }
  }
}

function prettyInput(text) {
  try {
    return JSON.stringify(JSON.parse(text || "{}"), null, 2);
  } catch {
    return text;
  }
}

function compactInput(text) {
  try {
    const value = JSON.parse(text);
    if (!value || typeof value !== "object" || Array.isArray(value)) return null;
    return JSON.stringify(value);
  } catch {
    return null;
  }
}
