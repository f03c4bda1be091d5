// A front end's side of AG-UI, in Node: ask tether's demo agent through @ag-ui/client.
//   npm install @ag-ui/client@1.0.0
//   tether serve            (another terminal; the offline demo agent, no key needed)
//   node chat.mjs "What can you do?"
import { HttpAgent } from "@ag-ui/client";

const base = process.env.TETHER_URL ?? "http://127.0.0.1:8000";
const agent = new HttpAgent({ url: `${base}/v1/ag-ui/notes`, threadId: `example-${Date.now()}` });
agent.addMessage({ id: crypto.randomUUID(), role: "user", content: process.argv[2] ?? "hello" });

for (;;) {
  let outcome;
  await agent.runAgent(
    {},
    {
      onTextMessageContentEvent: ({ event }) => process.stdout.write(event.delta),
      onToolCallStartEvent: ({ event }) => console.log(`\n[tool] ${event.toolCallName}`),
      onRunFinishedEvent: ({ event }) => {
        outcome = event.outcome;
      },
    },
  );
  if (outcome?.type !== "interrupt") break;
  // A real UI shows a dialog; this example approves every call it is asked about.
  const resume = outcome.interrupts.map((i) => ({
    interruptId: i.id,
    status: "resolved",
    payload: { approved: true },
  }));
  console.log(`\n[approving] ${outcome.interrupts.map((i) => i.metadata.toolName).join(", ")}`);
  await agent.runAgent({ resume });
  break;
}
console.log();
