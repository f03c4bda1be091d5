// A CopilotKit-style chat page over AG-UI: @ag-ui/client's HttpAgent against `tether serve`
// (through serve.mjs, so the page and the endpoint share one origin). It streams text and
// thinking, shows tool calls and their results, asks Allow/Deny for a confirmation interrupt
// and resumes the run with the answers, and runs its own frontend tool, `pick_colour`.
// Everything the model or a tool says is untrusted: it is shown with textContent only.
import { HttpAgent } from "@ag-ui/client";

const agentId = new URLSearchParams(location.search).get("agent") ?? "notes";
const agent = new HttpAgent({
  url: `/v1/ag-ui/${encodeURIComponent(agentId)}`,
  threadId: `page-${crypto.randomUUID()}`,
});

// Tools this page declares in every run: the model may call them, the page runs them.
const TOOLS = [
  {
    name: "pick_colour",
    description: "Ask the user to pick a colour in their browser; returns it as #rrggbb.",
    parameters: {
      type: "object",
      properties: { purpose: { type: "string", description: "what the colour is for" } },
    },
  },
];

const $ = (id) => document.getElementById(id);
const log = $("log");
const lines = new Map(); // messageId → its element (text or thinking)
const calls = new Map(); // toolCallId → { el, name, args }

function add(kind, text) {
  const el = document.createElement("div");
  el.className = kind;
  el.textContent = text;
  log.append(el);
  log.scrollTop = log.scrollHeight;
  return el;
}

function button(label, onClick) {
  const b = document.createElement("button");
  b.type = "button";
  b.textContent = label;
  b.addEventListener("click", onClick);
  return b;
}

function setBusy(busy, status) {
  $("message").disabled = busy;
  $("send").disabled = busy;
  $("status").textContent = status ?? (busy ? "working…" : "ready");
  if (!busy) $("message").focus();
}

function line(id, kind) {
  if (!lines.has(id)) lines.set(id, add(kind, ""));
  return lines.get(id);
}

function showCall(id) {
  const call = calls.get(id);
  call.el.textContent = `${call.name}(${call.args})${call.result === undefined ? "" : ` → ${call.result}`}`;
  log.scrollTop = log.scrollHeight;
}

let runError = false;

function onEvent({ event }) {
  switch (event.type) {
    case "TEXT_MESSAGE_START":
    case "TEXT_MESSAGE_CONTENT":
      line(event.messageId, "assistant").textContent += event.delta ?? "";
      break;
    case "REASONING_MESSAGE_START":
    case "REASONING_MESSAGE_CONTENT":
      line(event.messageId, "thinking").textContent += event.delta ?? "";
      break;
    case "TOOL_CALL_START":
      calls.set(event.toolCallId, { el: add("tool", ""), name: event.toolCallName, args: "" });
      showCall(event.toolCallId);
      break;
    case "TOOL_CALL_ARGS":
      calls.get(event.toolCallId).args += event.delta;
      showCall(event.toolCallId);
      break;
    case "TOOL_CALL_RESULT":
      if (calls.has(event.toolCallId)) {
        calls.get(event.toolCallId).result = event.content;
        showCall(event.toolCallId);
      }
      break;
    case "RUN_ERROR":
      runError = true;
      add("error", `The run failed: ${event.message}`);
      break;
  }
}

async function run(params = {}) {
  setBusy(true);
  let outcome;
  runError = false;
  try {
    await agent.runAgent(
      { tools: TOOLS, ...params },
      { onEvent, onRunFinishedEvent: ({ event }) => void (outcome = event.outcome) },
    );
  } catch (error) {
    if (!runError) add("error", `The run failed: ${error?.message ?? error}`);
    setBusy(false);
    return;
  }
  if (outcome?.type === "interrupt") return ask(outcome.interrupts);
  const pending = outcome?.pendingToolCallIds ?? [];
  if (pending.length) return runFrontendTools(pending);
  setBusy(false);
}

// A confirmation interrupt: one card per call, answered with Allow or Deny; the run
// resumes once every card has its answer.
function ask(interrupts) {
  const answers = new Map();
  for (const interrupt of interrupts) {
    const { toolName, arguments: args } = interrupt.metadata ?? {};
    const card = add("ask", "");
    card.dataset.interrupt = interrupt.id;
    const text = document.createElement("div");
    text.textContent = `${interrupt.message ?? "Allow this call?"}\n${toolName}(${JSON.stringify(args)})`;
    card.append(text);
    const answer = (approved) => () => {
      answers.set(interrupt.id, {
        interruptId: interrupt.id,
        status: "resolved",
        payload: approved ? { approved: true } : { approved: false, reason: "denied in the browser" },
      });
      for (const b of card.querySelectorAll("button")) b.disabled = true;
      card.append(approved ? " allowed" : " denied");
      if (answers.size === interrupts.length) run({ resume: [...answers.values()] });
    };
    card.append(button("Allow", answer(true)), button("Deny", answer(false)));
  }
  setBusy(true, "waiting for your answer");
}

// Frontend tools: the run finished with calls only this page can run. Each gets a card;
// once all have results, they go back as `tool` messages in the next run.
const FRONTEND = { pick_colour: pickColour, open_page: openPage };

function runFrontendTools(ids) {
  const results = new Map();
  const all = agent.messages.flatMap((m) => m.toolCalls ?? []);
  for (const id of ids) {
    const call = all.find((c) => c.id === id);
    const name = call?.function.name ?? "?";
    let args = {};
    try {
      args = JSON.parse(call?.function.arguments || "{}");
    } catch {
      args = {};
    }
    const done = (content) => {
      results.set(id, content);
      if (results.size < ids.length) return;
      for (const [toolCallId, result] of results) {
        agent.addMessage({ id: crypto.randomUUID(), role: "tool", toolCallId, content: result });
      }
      run();
    };
    (FRONTEND[name] ?? unknownTool)(args, done, name);
  }
  setBusy(true, "waiting for your answer");
}

function pickColour(args, done) {
  const card = add("ask", "");
  card.dataset.tool = "pick_colour";
  const text = document.createElement("div");
  text.textContent = `The agent asks you to pick a colour${args.purpose ? ` for ${args.purpose}` : ""}.`;
  const input = document.createElement("input");
  input.type = "color";
  input.value = "#3b82f6";
  input.setAttribute("aria-label", "colour");
  const use = button("Use this colour", () => {
    use.disabled = input.disabled = true;
    $("swatch").style.background = input.value;
    done(input.value);
  });
  card.append(text, input, use);
}

function openPage(args, done) {
  // The offline demo agent's own client-side tool: show the link, let the user follow it.
  const card = add("ask", "The agent wants you to see a page: ");
  const url = String(args.url ?? "");
  if (!/^https?:\/\//i.test(url)) return done("refused: not an http(s) link");
  const link = document.createElement("a");
  link.href = url;
  link.textContent = url;
  link.target = "_blank";
  link.rel = "noopener noreferrer";
  const ok = button("Done", () => {
    ok.disabled = true;
    done("the user was shown the link");
  });
  card.append(link, " ", ok);
}

function unknownTool(args, done, name) {
  add("error", `The agent called ${name}, which this page does not have.`);
  done(`error: this page has no tool named ${name}`);
}

$("composer").addEventListener("submit", (e) => {
  e.preventDefault();
  const text = $("message").value.trim();
  if (!text) return;
  $("message").value = "";
  add("user", text);
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  run();
});
$("agent").textContent = `agent: ${agentId}`;
setBusy(false);
