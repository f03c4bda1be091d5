// The app: wires the session list, the conversation, the pending panel and the composer to
// the HTTP API. Everything the page shows comes from the API's JSON and its event stream.

import { ApiError, AuthRequired, json, request } from "./api.js";
import { KeyPrompt } from "./auth.js";
import { PendingPanel } from "./confirm.js";
import { Conversation, firstTokenTimings } from "./conversation.js";
import { fetchIntro, introElement } from "./intro.js";
import { badgeText, fetchAgents, fetchSessions, renderAgents, renderSessions } from "./sessions.js";
import { ModeSelect } from "./mode.js";
import { ServerQuestions } from "./mcp_questions.js";
import { LoginLinks } from "./mcp_login.js";
import { ResourcePicker } from "./mcp_resources.js";
import { Follower, statusAfter } from "./stream.js";
import { Status } from "./status.js";

const $ = (id) => document.getElementById(id);
const AGENT_KEY = "tether.agent";
const PAGE = 100; // messages per page

class App {
  constructor() {
    this.agents = [];
    this.sessions = [];
    this.sessionId = null;
    this.status = "idle";
    this.follower = null;
    this.queue = []; // messages typed while a reply runs: [{text, bubble}], sent when it ends
    this.keys = new KeyPrompt();
    this.conversation = new Conversation(
      $("conversation"),
      { onUsage: (usage) => this.bar.usage(usage), onPlugin: (ev) => this.bar.plugin(ev) },
      $("jump"),
    );
    this.pending = new PendingPanel($("pending"), (event) => this.resume(event));
    this.questions = new ServerQuestions($("pending"), () => this.sessionId);
    this.resources = new ResourcePicker(document.querySelector(".composer-buttons"), $("message"), () => this.sessionId);
    this.logins = new LoginLinks($("pending"), () => this.sessionId);
    this.bar = new Status();
    this.mode = new ModeSelect($("permission-mode"), (fn) => this.guard(fn));
  }

  async start() {
    this.bindUi();
    this.setReady(false);
    await this.withAuth(() => this.loadAgents());
    await this.loadSessions();
    const wanted = decodeURIComponent(location.hash.replace(/^#\/?s\//, ""));
    const first = this.sessions.find((s) => s.session_id === wanted) || this.sessions[0];
    if (first) await this.select(first.session_id);
    else this.showEmpty();
    this.setReady(true);
    setInterval(() => document.visibilityState === "visible" && this.loadSessions().catch(() => {}), 5000);
  }

  /** While a session loads, the conversation is busy and nothing can be sent to it. */
  setLoading(loading) {
    $("conversation").setAttribute("aria-busy", String(loading));
    this.loading = loading;
    $("send").disabled = loading || !this.ready;
  }

  /** Controls that need the agents and sessions loaded wait for them. */
  setReady(ready) {
    for (const id of ["new-session", "agent-picker"]) $(id).disabled = !ready;
    this.ready = ready;
    $("send").disabled = !ready || this.loading;
  }

  bindUi() {
    const box = $("message");
    $("composer").addEventListener("submit", (e) => {
      e.preventDefault();
      this.send();
    });
    box.addEventListener("keydown", (e) => {
      if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
        e.preventDefault();
        this.send();
      }
    });
    document.addEventListener("keydown", (e) => {
      // Esc stops a running reply; a pause is ended only by its Stop button, never by a stray key.
      if (e.key === "Escape" && this.status === "running" && !document.querySelector("dialog[open]")) this.stop();
    });
    $("stop").onclick = () => this.stop();
    $("new-session").onclick = () => {
      this.closeNav();
      this.guard(() => this.createSession());
    };
    $("agent-picker").onchange = (e) => this.guard(() => this.pickAgent(e.target.value));
    $("menu-toggle").onclick = () => {
      const open = document.body.classList.toggle("nav-open");
      $("menu-toggle").setAttribute("aria-expanded", String(open));
    };
  }

  /** Run `fn`; on 401 ask for a key and run it again. */
  withAuth(fn) {
    return this.keys.retry(fn);
  }

  askKey() {
    return this.keys.ask();
  }

  /** Run a UI action; show its error instead of losing it. */
  async guard(fn) {
    this.bar.error("");
    try {
      await this.withAuth(fn);
    } catch (err) {
      this.bar.error(err instanceof ApiError ? err.message : String(err.message || err));
    }
  }

  async loadAgents() {
    this.agents = await fetchAgents();
    const saved = localStorage.getItem(AGENT_KEY);
    this.agentId = this.agents.some((a) => a.id === saved) ? saved : this.agents[0]?.id;
    renderAgents($("agent-picker"), this.agents, this.agentId);
    this.useAgent(this.agentId);
  }

  useAgent(id) {
    const agent = this.agents.find((a) => a.id === id);
    this.bar.agent(agent);
    this.conversation.agentName = agent?.name || id || "Assistant";
  }

  async pickAgent(id) {
    this.agentId = id;
    localStorage.setItem(AGENT_KEY, id);
    this.useAgent(id);
    await this.loadSessions();
    if (this.sessions[0]) await this.select(this.sessions[0].session_id);
    else this.showEmpty();
  }

  /** Refresh the session list (one refresh at a time; callers share one in flight). */
  loadSessions() {
    if (!this.listing) this.listing = this.refreshSessions().finally(() => (this.listing = null));
    return this.listing;
  }

  async refreshSessions() {
    const agentId = this.agentId;
    if (!agentId) return;
    const current = this.sessions.find((s) => s.session_id === this.sessionId);
    const list = await this.withAuth(() => fetchSessions(agentId, current));
    if (agentId !== this.agentId) return; // another agent was picked meanwhile
    this.sessions = list;
    const mine = list.find((s) => s.session_id === this.sessionId);
    if (mine && this.follower?.busy) mine.status = this.status; // the stream knows better
    this.renderSessions();
    // Another tab started, answered or ended a reply: show what happened (and join it).
    const unseen = mine && this.follower && (mine.last_event_id || 0) > this.follower.lastSeq;
    if (unseen && !this.follower.busy && mine.status !== this.status) await this.select(mine.session_id);
  }

  renderSessions() {
    renderSessions($("session-list"), this.sessions, this.sessionId, {
      onSelect: (id) => {
        this.closeNav();
        this.guard(() => this.select(id));
      },
      onDelete: (id, title) => this.guard(() => this.deleteSession(id, title)),
      onRename: (id, title) => this.guard(() => this.renameSession(id, title)),
    });
  }

  /** Set session `id`'s title (`PUT .../title`) and show it in the list. */
  async renameSession(id, title) {
    const view = await json("PUT", `/v1/sessions/${encodeURIComponent(id)}/title`, { title });
    const session = this.sessions.find((s) => s.session_id === id);
    if (session) session.metadata = view.metadata;
    this.renderSessions();
  }

  /** A session still named by its date is named after its first message. */
  nameAfter(text) {
    const session = this.sessions.find((s) => s.session_id === this.sessionId);
    if (!session || session.metadata?.title) return;
    const title = text.trim().split("\n")[0].slice(0, 60).trim();
    if (!title) return;
    session.metadata = { ...(session.metadata || {}), title };
    this.renderSessions();
    this.renameSession(session.session_id, title).catch((err) => this.bar.error(`The session was not renamed: ${err.message || err}`));
  }

  /** The agent's introduction, while the conversation is empty. */
  async showIntro() {
    const agentId = this.agentId;
    const sessionId = this.sessionId;
    let intro;
    try {
      intro = await fetchIntro(agentId);
    } catch {
      const agent = this.agents.find((a) => a.id === agentId) || {};
      intro = { name: agent.name || agentId, description: agent.description || "", examples: [] };
    }
    if (agentId !== this.agentId || sessionId !== this.sessionId) return;
    this.conversation.showIntro(
      introElement(intro, (text) => {
        $("message").value = text;
        this.send();
      }),
    );
  }

  closeNav() {
    document.body.classList.remove("nav-open");
    $("menu-toggle").setAttribute("aria-expanded", "false");
  }

  showEmpty() {
    this.follower?.close();
    this.follower = null;
    this.sessionId = null;
    this.mode.show(null);
    this.conversation.clear();
    this.pending.clear();
    this.questions.clear();
    this.setStatus("idle");
    this.showIntro();
  }

  /** Messages typed while `run` (making or loading a session) is under way wait for it. */
  switching(run) {
    const mark = run.catch(() => {});
    this.selecting = mark;
    mark.finally(() => {
      if (this.selecting === mark) this.selecting = null;
    });
    return run;
  }

  createSession(title) {
    return this.switching(this.makeSession(title));
  }

  async makeSession(title) {
    const body = { agent_id: this.agentId };
    if (title) body.metadata = { title: title.slice(0, 60) };
    const session = await json("POST", "/v1/sessions", body);
    this.sessions.unshift(session);
    await this.select(session.session_id);
    $("message").focus();
    return session;
  }

  async deleteSession(id, title) {
    if (!confirm(`Delete ${title}? Its conversation is removed for good.`)) return;
    await request("DELETE", `/v1/sessions/${encodeURIComponent(id)}`);
    this.sessions = this.sessions.filter((s) => s.session_id !== id);
    if (id === this.sessionId) {
      if (this.sessions[0]) await this.select(this.sessions[0].session_id);
      else this.showEmpty();
    }
    this.renderSessions();
  }

  /** Show session `id`: its messages, its status, and its reply in progress if any. */
  select(id) {
    return this.switching(this.load(id));
  }

  async load(id) {
    this.follower?.close();
    this.unqueue();
    this.sessionId = id;
    this.renderSessions();
    history.replaceState(null, "", `#/s/${encodeURIComponent(id)}`);
    this.pending.clear();
    this.questions.clear();
    this.bar.reset();
    const path = `/v1/sessions/${encodeURIComponent(id)}`;
    this.setLoading(true);
    let session;
    let page;
    try {
      session = await json("GET", path);
      page = await json("GET", `${path}/messages?limit=${PAGE}`);
    } finally {
      if (this.sessionId === id) this.setLoading(false);
    }
    if (this.sessionId !== id) return;
    this.mode.show(id, session.permission_mode);
    this.logins.refresh();
    this.conversation.showMessages(page.messages || []);
    this.showEarlier(id, page.next_before);
    this.follower = this.newFollower(id);
    this.setStatus(session.status);
    if (session.status && session.status !== "idle") {
      this.follow(null); // join the reply in progress: replay the log, then follow it
    } else {
      this.follower.lastSeq = session.last_event_id || 0;
      if (!(page.messages || []).length) this.showIntro();
    }
  }

  /** A "Load earlier messages" button while the conversation has older pages. */
  showEarlier(id, before) {
    if (before === null || before === undefined) return;
    const button = document.createElement("button");
    button.type = "button";
    button.className = "earlier";
    button.textContent = "Load earlier messages";
    button.onclick = () =>
      this.guard(async () => {
        const page = await json("GET", `/v1/sessions/${encodeURIComponent(id)}/messages?limit=${PAGE}&before=${before}`);
        if (this.sessionId !== id) return;
        button.remove();
        this.conversation.prependMessages(page.messages || []);
        this.showEarlier(id, page.next_before);
      });
    $("conversation").prepend(button);
  }

  newFollower(id) {
    return new Follower(id, {
      onBatch: (events, arrived) => this.onBatch(id, events, arrived),
      onConnection: (state) => this.bar.connection(state),
      onIdle: () => this.setStatus("idle"),
      onAuth: (err) => this.askKey(err),
    });
  }

  follow(response) {
    const follower = this.follower;
    follower.busy = true;
    return follower
      .follow(response)
      .catch((err) => this.bar.error(err.message || String(err)))
      .finally(() => (follower.busy = false));
  }

  onBatch(id, events, arrived) {
    if (id !== this.sessionId) return;
    this.conversation.batchArrived = arrived;
    for (const ev of events) {
      if (ev.type === "require_user_confirm") this.pending.showConfirm(ev);
      else if (ev.type === "require_external_execution") this.pending.showExternal(ev);
      if (ev.type.startsWith("require_")) this.conversation.toLatest(); // the asked call in view
      else if (this.pending.active && !ev.type.endsWith("_result") && ev.type !== "user_interrupt") this.pending.clear();
      this.questions.see(ev);
      if (ev.type === "error" && ev.error_type === "MCPAuthorizationRequired") this.logins.refresh();
      this.conversation.apply(ev);
      this.setStatus(statusAfter(ev, this.status));
    }
    this.conversation.flush();
  }

  setStatus(status) {
    this.status = status || "idle";
    if (this.status === "idle" && this.queue.length) queueMicrotask(() => this.sendQueued());
    $("stop").disabled = this.status === "idle";
    document.body.dataset.status = this.status;
    const session = this.sessions.find((s) => s.session_id === this.sessionId);
    if (session && session.status !== this.status) {
      session.status = this.status;
      const badge = document.querySelector(`#session-list li[data-session-id="${CSS.escape(this.sessionId)}"] .badge`);
      if (badge) {
        badge.className = `badge ${this.status}`;
        badge.textContent = badgeText(this.status);
      } else this.renderSessions();
    }
  }

  async send() {
    const box = $("message");
    const text = box.value;
    while (this.selecting) await this.selecting; // sent once the session is shown
    if (!text.trim() || !this.ready) return;
    if (this.status === "running" || this.queue.length) {
      box.value = "";
      this.queue.push({ text, bubble: this.conversation.addUserText(text, null, null, true) });
      return;
    }
    if (this.status !== "idle") {
      this.bar.error("The agent is waiting for you: answer the pending call first.");
      return;
    }
    await this.post(text);
  }

  /** Send the oldest queued message (the reply it waited for has ended). */
  async sendQueued() {
    if (this.status !== "idle" || !this.queue.length || this.sending) return;
    const { text, bubble } = this.queue.shift();
    bubble.remove();
    await this.post(text);
  }

  /** Switching sessions: queued messages go back into the message box. */
  unqueue() {
    if (!this.queue.length) return;
    const box = $("message");
    box.value = [...this.queue.map((q) => q.text), box.value].filter((t) => t.trim()).join("\n\n");
    for (const q of this.queue) q.bubble.remove();
    this.queue = [];
  }

  async post(text) {
    const box = $("message");
    this.sending = true;
    await this.guard(async () => {
      if (!this.sessionId) await this.createSession(text.trim().split("\n")[0]);
      else this.nameAfter(text);
      if (box.value === text) box.value = "";
      const bubble = this.conversation.addUserText(text);
      this.setStatus("running");
      const sent = this.postReply({ role: "user", content: text }, () => {
        bubble.remove(); // not sent: the text goes back into the box
        box.value ||= text;
      });
      this.sending = false;
      await sent;
    }).finally(() => (this.sending = false));
  }

  /** Post a reply input (a message or a resume event) and follow its SSE answer. */
  async postReply(input, undo) {
    let res;
    try {
      res = await request("POST", `/v1/sessions/${encodeURIComponent(this.sessionId)}/replies`, {
        body: { input },
        accept: "text/event-stream",
      });
    } catch (err) {
      if (err instanceof ApiError || err instanceof AuthRequired) {
        undo?.();
        const session = await json("GET", `/v1/sessions/${encodeURIComponent(this.sessionId)}`).catch(() => null);
        this.setStatus(session?.status || "idle");
        if (err.status === 409 && session && session.status !== "idle") {
          await this.select(this.sessionId); // busy elsewhere: show what it is doing
        }
        throw err;
      }
      this.bar.connection("reconnecting"); // the request may have reached the server: follow the log
      return this.follow(null);
    }
    return this.follow(res);
  }

  async resume(event) {
    await this.withAuth(() => this.postReply(event));
  }

  async stop() {
    if (!this.sessionId || this.status === "idle") return;
    const wasPaused = this.status !== "running";
    await this.guard(async () => {
      await request("POST", `/v1/sessions/${encodeURIComponent(this.sessionId)}/interrupt`);
      if (wasPaused) await this.follow(null);
    });
  }
}

const app = new App();
window.tether = { app, firstTokenTimings };
app.start().catch((err) => app.bar.error(err.message || String(err)));
