// Following a session's events: read an SSE response, and when it drops before the reply
// ended or paused, reconnect to /events with the last event id (Last-Event-ID and ?after=),
// so nothing is lost and, since ids only grow, nothing is applied twice.

import { AuthRequired, json, request } from "./api.js";
import { sseBatches } from "./sse.js";

const TERMINAL = new Set(["reply_end", "require_user_confirm", "require_external_execution", "error"]);
const DELAYS = [250, 500, 1000, 2000];

/** Follows one session's event log; `handlers` get events, batches and connection state. */
export class Follower {
  constructor(sessionId, handlers) {
    this.sessionId = sessionId;
    this.handlers = handlers;
    this.lastSeq = 0;
    this.abort = new AbortController();
    this.running = null;
  }

  /** Stop following (switching sessions); any request in flight is aborted. */
  close() {
    this.abort.abort();
  }

  get closed() {
    return this.abort.signal.aborted;
  }

  /** Follow `response` (an SSE Response) or, without one, /events after the last id. */
  follow(response) {
    const run = (this.running || Promise.resolve()).then(() => this.loop(response));
    this.running = run.catch(() => {});
    return run;
  }

  async loop(response) {
    let attempt = 0;
    let res = response;
    while (!this.closed) {
      try {
        if (!res) res = await this.open();
        this.handlers.onConnection(attempt ? "live" : "");
        attempt = 0;
        const last = await this.read(res);
        res = null;
        if (this.closed || TERMINAL.has(last)) break;
        const session = await json("GET", `/v1/sessions/${encodeURIComponent(this.sessionId)}`);
        if (session.status === "idle") {
          this.handlers.onIdle(session);
          break;
        }
      } catch (err) {
        res = null;
        if (this.closed) break;
        if (err instanceof AuthRequired) {
          await this.handlers.onAuth(err);
          continue;
        }
        if (err.status && err.status !== 502 && err.status !== 503 && err.status !== 504) throw err;
        this.handlers.onConnection("reconnecting");
        await this.wait(DELAYS[Math.min(attempt++, DELAYS.length - 1)]);
      }
    }
    if (!this.closed) this.handlers.onConnection("");
  }

  open() {
    const id = encodeURIComponent(this.sessionId);
    return request("GET", `/v1/sessions/${id}/events?after=${this.lastSeq}`, {
      accept: "text/event-stream",
      headers: { "Last-Event-ID": String(this.lastSeq) },
      signal: this.abort.signal,
    });
  }

  async read(res) {
    let lastType = null;
    for await (const batch of sseBatches(res)) {
      if (this.closed) break;
      const arrived = performance.now();
      const events = [];
      for (const frame of batch) {
        const seq = Number(frame.id);
        if (frame.id !== null && Number.isFinite(seq)) {
          if (seq <= this.lastSeq) continue; // already applied: a replay overlaps
          this.lastSeq = seq;
        }
        const ev = JSON.parse(frame.data);
        lastType = ev.type;
        events.push(ev);
      }
      if (events.length) this.handlers.onBatch(events, arrived);
    }
    return lastType;
  }

  wait(ms) {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        window.removeEventListener("online", done);
        resolve();
      }
      window.addEventListener("online", done, { once: true });
      this.abort.signal.addEventListener("abort", done, { once: true });
    });
  }
}

/** The session status after event `ev` (`current` before it). */
export function statusAfter(ev, current) {
  switch (ev.type) {
    case "reply_end":
    case "error":
      return "idle";
    case "require_user_confirm":
      return "awaiting_confirmation";
    case "require_external_execution":
      return current === "awaiting_confirmation" ? current : "awaiting_external";
    default:
      return ev.type.endsWith("_result") || ev.type === "user_interrupt" ? current : "running";
  }
}
