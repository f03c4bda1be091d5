// The "Sessions" navigation: one entry per session with its status badge and a delete button,
// and the agent picker above it.

import { AuthRequired, json } from "./api.js";

const BADGES = {
  idle: "idle",
  running: "running",
  awaiting_confirmation: "awaiting you",
  awaiting_external: "awaiting you",
};

/** The badge text for a session status. */
export function badgeText(status) {
  return BADGES[status] || status || "idle";
}

function title(session) {
  const meta = session.metadata || {};
  if (typeof meta.title === "string" && meta.title) return meta.title;
  const when = new Date(session.created_at);
  if (Number.isNaN(when.getTime())) return `Session ${String(session.session_id).slice(0, 8)}`;
  return when.toLocaleString(undefined, { month: "short", day: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** Render `sessions` into the list `root`; `current` is highlighted. */
export function renderSessions(root, sessions, current, { onSelect, onDelete, onRename }) {
  root.replaceChildren();
  for (const session of sessions) {
    const li = document.createElement("li");
    li.dataset.sessionId = session.session_id;
    const open = document.createElement("button");
    open.type = "button";
    open.className = "session-open";
    const name = document.createElement("span");
    name.className = "session-title";
    name.textContent = title(session);
    const badge = document.createElement("span");
    badge.className = `badge ${session.status || "idle"}`;
    badge.textContent = badgeText(session.status);
    open.append(name, badge);
    if (session.session_id === current) open.setAttribute("aria-current", "page");
    open.onclick = () => onSelect(session.session_id);
    const del = document.createElement("button");
    del.type = "button";
    del.className = "session-delete";
    del.textContent = "×";
    del.setAttribute("aria-label", `Delete ${title(session)}`);
    del.onclick = () => onDelete(session.session_id, title(session));
    const rename = document.createElement("button");
    rename.type = "button";
    rename.className = "session-rename";
    rename.textContent = "✎";
    rename.setAttribute("aria-label", `Rename ${title(session)}`);
    rename.onclick = () => editTitle(li, open, session, onRename);
    li.append(open, rename, del);
    root.append(li);
  }
}

/** Replace the entry's button by a title field: Enter saves, Esc or leaving it cancels. */
function editTitle(li, open, session, onRename) {
  const input = document.createElement("input");
  input.type = "text";
  input.className = "title-input";
  input.maxLength = 200;
  input.value = title(session);
  input.setAttribute("aria-label", "Session title");
  let done = false;
  const finish = (save) => {
    if (done) return;
    done = true;
    const value = input.value.trim();
    input.replaceWith(open);
    if (save && value && value !== title(session)) onRename(session.session_id, value);
  };
  input.onkeydown = (e) => {
    if (e.key === "Enter") {
      e.preventDefault();
      finish(true);
    } else if (e.key === "Escape") {
      e.stopPropagation();
      finish(false);
    }
  };
  input.onblur = () => finish(false);
  open.replaceWith(input);
  input.focus();
  input.select();
}

/** The agents the server serves (`GET /v1/agents`). */
export async function fetchAgents() {
  const body = await json("GET", "/v1/agents");
  return Array.isArray(body) ? body : body.agents || [];
}

/** Fill the agent picker; `selected` is the agent id shown. */
export function renderAgents(picker, agents, selected) {
  picker.replaceChildren(
    ...agents.map((a) => {
      const o = document.createElement("option");
      o.value = a.id;
      o.textContent = a.name && a.name !== a.id ? `${a.name} (${a.id})` : a.id;
      if (a.description) o.title = a.description;
      return o;
    }),
  );
  picker.value = selected || "";
}

/**
 * The sessions of `agentId`, newest first, each with its `status`. `current` (a session
 * made since the list was asked for) is kept when the list does not have it yet.
 */
export async function fetchSessions(agentId, current) {
  const body = await json("GET", `/v1/sessions?agent_id=${encodeURIComponent(agentId)}`);
  const list = Array.isArray(body) ? body : body.sessions || body.items || [];
  if (current && !list.some((s) => s.session_id === current.session_id)) list.push(current);
  await withStatuses(list.slice(0, 30));
  const when = (s) => String(s.updated_at || s.created_at || "");
  return list.sort((a, b) => when(b).localeCompare(when(a)));
}

/** Fill in `status` of listed sessions that lack it (GET each one). */
async function withStatuses(list) {
  await Promise.all(
    list
      .filter((s) => !s.status)
      .map(async (s) => {
        try {
          const view = await json("GET", `/v1/sessions/${encodeURIComponent(s.session_id)}`);
          s.status = view.status;
          s.last_event_id = view.last_event_id;
        } catch (err) {
          if (err instanceof AuthRequired) throw err;
        }
      }),
  );
}
