// MCP logins: for each MCP server of the session's agent that needs the user's own OAuth
// login and has none, a "Log in to <server>" button. It asks the service to start the
// login (POST /v1/sessions/{id}/mcp-servers/{name}/login) and shows the authorization
// server's page as a link that opens in a new tab; the service's callback route receives
// the browser afterwards. The panel looks again until the login is done.

import { json } from "./api.js";

const LOOK_EVERY_MS = 1500;
const LOOK_FOR_MS = 10 * 60 * 1000;

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children);
  return node;
}

/** A panel placed before `anchor`; `sessionId()` names the session. */
export class LoginLinks {
  constructor(anchor, sessionId) {
    this.sessionId = sessionId;
    this.panel = el("section", { className: "pending-box", hidden: true });
    this.panel.setAttribute("aria-label", "MCP logins");
    anchor.before(this.panel);
    this.timer = null;
  }

  base() {
    return `/v1/sessions/${encodeURIComponent(this.sessionId())}/mcp-servers`;
  }

  /** Look at the session's servers now; show the ones waiting for a login. */
  async refresh() {
    const id = this.sessionId();
    if (!id) return this.show([]);
    let listing;
    try {
      listing = await json("GET", this.base());
    } catch {
      return this.show([]); // an older service, or no agent: nothing to log in to
    }
    if (id === this.sessionId()) this.show(listing.servers.filter((s) => s.login && !s.logged_in));
  }

  show(waiting) {
    this.panel.replaceChildren();
    this.panel.hidden = !waiting.length;
    if (!waiting.length) return;
    this.panel.append(el("h2", { textContent: "MCP servers waiting for your login" }));
    for (const server of waiting) {
      const row = el("p", {}, `${server.name} needs you to log in. `);
      const button = el("button", { type: "button", textContent: `Log in to ${server.name}` });
      button.onclick = () => this.start(server.name, row, button);
      row.append(button);
      this.panel.append(row);
    }
  }

  async start(name, row, button) {
    button.disabled = true;
    try {
      const started = await json("POST", `${this.base()}/${encodeURIComponent(name)}/login`);
      if (started.status === "logged_in") return this.refresh();
      const link = el("a", {
        href: started.authorization_url,
        target: "_blank",
        rel: "noopener noreferrer",
        textContent: `Open the login page of ${name}`,
      });
      row.replaceChildren(`${name}: `, link, " (then come back here)");
      this.watch();
    } catch (err) {
      row.append(el("span", { className: "form-error", role: "alert", textContent: ` ${err.message || err}` }));
      button.disabled = false;
    }
  }

  /** Look again every little while until no login waits (or ten minutes passed). */
  watch() {
    clearInterval(this.timer);
    const until = Date.now() + LOOK_FOR_MS;
    this.timer = setInterval(async () => {
      await this.refresh();
      if (this.panel.hidden || Date.now() > until) clearInterval(this.timer);
    }, LOOK_EVERY_MS);
  }
}
