// The "Sessions" navigation: one entry per session with its status badge and a delete button.

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
export function renderSessions(root, sessions, current, { onSelect, onDelete }) {
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
    li.append(open, del);
    root.append(li);
  }
}
