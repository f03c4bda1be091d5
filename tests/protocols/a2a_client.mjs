// @a2a-js/sdk's own client (pinned) against `tether serve`: every scenario over JSON-RPC
// and HTTP+JSON. Args: base URL, API key, the test dir (its runs.log). Prints a JSON report.
import { existsSync, readFileSync } from "node:fs";
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client";

const [base, key, testDir] = process.argv.slice(2);
const plain = globalThis.fetch;
globalThis.fetch = (url, init = {}) => {
  const headers = new Headers(init.headers);
  headers.set("authorization", `Bearer ${key}`);
  return plain(url, { ...init, headers });
};

const STATES = {
  1: "submitted", 2: "working", 3: "completed", 4: "failed", 5: "canceled",
  6: "input_required", 7: "rejected", 8: "auth_required",
};
let counter = 0;
const text = (t) => ({ content: { $case: "text", value: t } });
const message = (parts, extra = {}) => ({
  message: {
    messageId: `m-${process.pid}-${++counter}`, role: 1, parts,
    contextId: "", taskId: "", extensions: [], referenceTaskIds: [], metadata: undefined,
    ...extra,
  },
  configuration: undefined, metadata: undefined, tenant: "",
});
const state = (task) => STATES[task.status.state] ?? String(task.status.state);
const said = (msg) =>
  (msg?.parts ?? []).filter((p) => p.content?.$case === "text").map((p) => p.content.value).join("");
const runs = () => {
  const path = `${testDir}/runs.log`;
  return existsSync(path) ? readFileSync(path, "utf8").split("\n").filter(Boolean) : [];
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function stream(client, request) {
  const kinds = [];
  let task;
  for await (const event of client.sendMessageStream(request)) {
    const { $case, value } = event.payload;
    kinds.push($case);
    if ($case === "task") task = value;
    if ($case === "statusUpdate") task = { ...task, id: value.taskId, status: value.status };
  }
  return { kinds, task };
}

async function scenarios(client, tag) {
  const out = {};
  const first = await stream(client, message([text("hello js")], { contextId: `${tag}-c1` }));
  out.stream = {
    first: first.kinds[0], last: first.kinds.at(-1),
    artifacts: first.kinds.filter((k) => k === "artifactUpdate").length,
    state: state(first.task), text: said(first.task.status.message),
  };
  const sent = await client.sendMessage(message([text("plain send")], { contextId: `${tag}-c1` }));
  const got = await client.getTask({ id: sent.id, tenant: "" });
  const listed = await client.listTasks({ contextId: `${tag}-c1`, tenant: "", pageToken: "" });
  out.send_get_list = {
    state: state(got), text: said(got.status.message),
    listed: listed.tasks.map((t) => t.id).sort(), ids: [first.task.id, sent.id].sort(),
  };
  const plan = JSON.stringify([[["save_note", { name: tag, text: "x" }]], "saved it"]);
  const asked = await client.sendMessage(message([text(plan)], { contextId: `${tag}-c2` }));
  const question = said(asked.status.message);
  const answered = await stream(client, message([text("yes")], { taskId: asked.id }));
  out.input_required = {
    first: state(asked), question, second: state(answered.task),
    text: said(answered.task.status.message), sameTask: answered.task.id === asked.id,
  };
  const gate = JSON.stringify([[["gate", { name: `never-${tag}` }]], "unreachable"]);
  const running = await client.sendMessage({
    ...message([text(gate)], { contextId: `${tag}-c3` }),
    configuration: { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true },
  });
  while (!runs().includes(`gate never-${tag} start`)) await sleep(20);
  const canceled = await client.cancelTask({ id: running.id, tenant: "", metadata: undefined });
  out.cancel = { state: state(canceled) };
  let missing;
  try {
    await client.getTask({ id: "no-such-task", tenant: "" });
  } catch (error) {
    missing = error.constructor.name;
  }
  out.not_found = { error: missing };
  return out;
}

const report = {};
for (const [tag, transport] of [["jsonrpc", "JSONRPC"], ["rest", "HTTP+JSON"]]) {
  try {
    const factory = new ClientFactory(
      ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] }),
    );
    const client = await factory.createFromUrl(`${base}/a2a/planner/`);
    report[tag] = { ok: true, ...(await scenarios(client, tag)) };
  } catch (error) {
    report[tag] = { ok: false, error: String(error?.stack ?? error) };
  }
}
process.stdout.write(JSON.stringify(report));
