// Drives `tether serve`'s AG-UI endpoint with the protocol's own client (@ag-ui/client).
// Usage: node agui_client.mjs BASE_URL API_KEY   — prints one JSON report on stdout.
// The client's verifier rejects out-of-order events: any violation fails the scenario.
import { HttpAgent } from "@ag-ui/client";

const [base, key] = process.argv.slice(2);

function agent(threadId, name = "planner") {
  const at = `${base}/v1/ag-ui/${name}`;
  return new HttpAgent({ url: at, threadId, headers: { authorization: `Bearer ${key}` } });
}

function plan(steps) {
  return { id: crypto.randomUUID(), role: "user", content: JSON.stringify(steps) };
}

async function run(a, params = {}) {
  const types = [];
  let finished;
  await a.runAgent(params, {
    onEvent: ({ event }) => {
      types.push(event.type);
    },
    onRunFinishedEvent: ({ event }) => {
      finished = event;
    },
  });
  return { types, finished };
}

const report = {};

async function scenario(name, body) {
  try {
    report[name] = { ok: true, ...(await body()) };
  } catch (error) {
    report[name] = { ok: false, error: String(error && error.stack ? error.stack : error) };
  }
}

await scenario("text_and_thinking", async () => {
  const a = agent(`n-text-${Date.now()}`);
  a.addMessage(plan(["!think weighing it|hello there"]));
  const { types, finished } = await run(a);
  const last = a.messages[a.messages.length - 1];
  return { types, outcome: finished.outcome.type, text: last.content };
});

await scenario("two_tool_calls", async () => {
  const a = agent(`n-tools-${Date.now()}`);
  a.addMessage(plan([[["tick", { n: 1 }], ["tick", { n: 2 }]], "ticked"]));
  const { types } = await run(a);
  const results = a.messages.filter((m) => m.role === "tool").map((m) => m.content);
  return { types, results };
});

for (const [name, answer] of [
  ["approve", { status: "resolved", payload: { approved: true } }],
  ["reject", { status: "resolved", payload: { approved: false, reason: "no" } }],
  ["cancel", { status: "cancelled" }],
]) {
  await scenario(`interrupt_${name}`, async () => {
    const a = agent(`n-${name}-${Date.now()}`);
    a.addMessage(plan([[["save_note", { name, text: "x" }]], `after ${name}`]));
    const first = await run(a);
    const interrupts = first.finished.outcome.interrupts;
    const second = await run(a, {
      resume: interrupts.map((i) => ({ interruptId: i.id, ...answer })),
    });
    const results = a.messages.filter((m) => m.role === "tool").map((m) => m.content);
    return {
      first: first.finished.outcome.type,
      reason: interrupts[0].reason,
      toolCallId: interrupts[0].toolCallId,
      second: second.finished.outcome.type,
      results,
      types: second.types,
    };
  });
}

await scenario("frontend_tool", async () => {
  const a = agent(`n-front-${Date.now()}`);
  const tools = [
    {
      name: "set_colour",
      description: "Change the background colour.",
      parameters: { type: "object", properties: { colour: { type: "string" } } },
    },
  ];
  a.addMessage(plan([[["set_colour", { colour: "teal" }]], "colour changed"]));
  const first = await run(a, { tools });
  const pending = first.finished.outcome.pendingToolCallIds;
  const call = a.messages.flatMap((m) => m.toolCalls || []).find((c) => c.id === pending[0]);
  a.addMessage({ id: crypto.randomUUID(), role: "tool", toolCallId: call.id, content: "done: teal" });
  const second = await run(a, { tools });
  const last = a.messages[a.messages.length - 1];
  return {
    pending: pending.length,
    name: call.function.name,
    args: JSON.parse(call.function.arguments),
    second: second.finished.outcome.type,
    text: last.content,
  };
});

await scenario("subagents", async () => {
  // The `team` agent (when served): two sub-agents in parallel, the writer's call asks.
  const a = agent(`n-team-${Date.now()}`, "team");
  a.addMessage({ id: crypto.randomUUID(), role: "user", content: "go" });
  const first = await run(a);
  const interrupts = first.finished.outcome.interrupts;
  const second = await run(a, {
    resume: interrupts.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } })),
  });
  return {
    first: first.finished.outcome.type,
    interrupt: interrupts[0].id,
    types: first.types,
    second: second.finished.outcome.type,
    secondTypes: second.types,
    result: second.finished.result,
  };
});

console.log(JSON.stringify(report));
