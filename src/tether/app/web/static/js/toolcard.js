// One tool call as a card: name, arguments (the command for Bash, a diff for Edit/Write,
// pretty JSON otherwise), live output, the result and the call's state.

import { diffElement, lineDiff } from "./diff.js";

const LABELS = {
  pending: "pending",
  asking: "asking",
  external: "awaiting result",
  running: "running",
  done: "done",
  error: "error",
  denied: "denied",
  interrupted: "interrupted",
};

/** What a person reads for a call that did not run to its end (the model's text is below). */
const HUMAN = {
  denied: "Not run: you denied this call.",
  interrupted: "Stopped: the reply was interrupted before this call finished.",
};

const RESULT_STATES = { success: "done", error: "error", denied: "denied", interrupted: "interrupted", running: "running" };

/** The text of a tool result's output (a string or a list of blocks). */
export function outputText(output) {
  if (typeof output === "string") return output;
  if (!Array.isArray(output)) return "";
  return output.map((b) => (b.type === "text" ? b.text : `[${b.source?.media_type || "data"}]`)).join("\n");
}

function parseInput(text) {
  try {
    const value = JSON.parse(text || "{}");
    return value && typeof value === "object" && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** Render a call's arguments for reading (used by cards and the confirmation panel). */
export function argumentsElement(name, inputText) {
  const args = parseInput(inputText);
  const box = document.createElement("div");
  box.className = "args";
  if (args && name === "Bash" && typeof args.command === "string") {
    const pre = document.createElement("pre");
    pre.className = "cmd";
    pre.textContent = `$ ${args.command}`;
    box.append(pre);
    if (args.description) box.append(caption(args.description));
  } else if (args && name === "Edit" && typeof args.old_string === "string") {
    box.append(caption(args.file_path || ""), diffElement(lineDiff(args.old_string, args.new_string ?? "")));
  } else if (args && name === "Write" && typeof args.content === "string") {
    box.append(caption(args.file_path || ""), diffElement(lineDiff("", args.content)));
  } else {
    const pre = document.createElement("pre");
    pre.className = "json";
    pre.textContent = args ? JSON.stringify(args, null, 2) : inputText;
    box.append(pre);
  }
  return box;
}

function caption(text) {
  const p = document.createElement("p");
  p.className = "caption";
  p.textContent = text;
  return p;
}

/** A tool call card (role=article, accessible name "<tool> tool call, <state>"). */
export class ToolCard {
  constructor(id, name) {
    this.id = id;
    this.name = name;
    this.argText = "";
    this.el = document.createElement("div");
    this.el.className = "tool-card";
    this.el.setAttribute("role", "article");
    this.el.dataset.callId = id;
    const head = document.createElement("div");
    head.className = "tool-head";
    const title = document.createElement("span");
    title.className = "tool-name";
    title.textContent = name;
    this.badge = document.createElement("span");
    this.badge.className = "state";
    head.append(title, this.badge);
    this.args = document.createElement("div");
    this.output = document.createElement("pre");
    this.output.className = "output";
    this.output.hidden = true;
    this.el.append(head, this.args, this.output);
    this.setState("pending");
  }

  /** Set the card's state (a key of LABELS). */
  setState(state) {
    this.state = state;
    this.el.dataset.state = state;
    this.badge.textContent = LABELS[state] || state;
    this.el.setAttribute("aria-label", `${this.name} tool call, ${LABELS[state] || state}`);
  }

  /** More argument JSON streamed by the model. */
  appendArgs(delta) {
    this.argText += delta;
    this.args.textContent = "";
    const pre = document.createElement("pre");
    pre.className = "json streaming";
    pre.textContent = this.argText;
    this.args.append(pre);
  }

  /** The complete call (from TOOL_CALL_END or a stored message). */
  setCall(call) {
    this.call = call;
    this.argText = call.input;
    this.args.replaceChildren(argumentsElement(this.name, call.input));
    const byCall = { asking: "asking", submitted: "external", allowed: "pending" };
    if (byCall[call.state] && (this.state === "pending" || this.state === "asking")) this.setState(byCall[call.state]);
  }

  /** The tool started running. */
  startRun() {
    this.output.hidden = false;
    this.output.textContent = "";
    this.setState("running");
  }

  /** Partial output of the running tool. */
  appendOutput(delta) {
    this.output.hidden = false;
    this.output.append(document.createTextNode(delta));
  }

  /** The final result (a denied or interrupted call says so in words for people). */
  setResult(result) {
    const text = outputText(result.output) || "(no output)";
    const human = HUMAN[result.state];
    this.output.hidden = false;
    this.output.classList.toggle("failed", result.state !== "success");
    this.told?.remove();
    this.told = null;
    if (human) {
      this.output.textContent = human;
      this.output.classList.add("human");
      const summary = document.createElement("summary");
      summary.textContent = "What the agent was told";
      const said = document.createElement("pre");
      said.className = "output";
      said.textContent = text;
      this.told = document.createElement("details");
      this.told.className = "told";
      this.told.append(summary, said);
      this.el.append(this.told);
    } else {
      this.output.classList.remove("human");
      this.output.textContent = text;
    }
    this.setState(RESULT_STATES[result.state] || "done");
  }
}
