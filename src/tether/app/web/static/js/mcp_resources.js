// The resource picker: "Attach resource" lists the MCP resources of the session's agent and
// appends the chosen one's text to the message box, in the block `tether chat` uses for
// `@server:uri` (so the user sees exactly what is sent).

import { json } from "./api.js";

function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  Object.assign(node, props);
  node.append(...children);
  return node;
}

/** A button placed in `buttons`; `sessionId()` names the session, `box` is the message box. */
export class ResourcePicker {
  constructor(buttons, box, sessionId) {
    this.box = box;
    this.sessionId = sessionId;
    this.button = el("button", { type: "button", textContent: "Attach resource" });
    this.button.onclick = () => this.open();
    buttons.append(this.button);
    this.panel = el("section", { className: "pending-box", hidden: true });
    this.panel.setAttribute("aria-label", "MCP resources");
    buttons.closest("form").before(this.panel);
  }

  base() {
    return `/v1/sessions/${encodeURIComponent(this.sessionId())}/mcp-resources`;
  }

  close() {
    this.panel.replaceChildren();
    this.panel.hidden = true;
  }

  async open() {
    if (!this.sessionId()) return;
    const error = el("p", { className: "form-error", role: "alert" });
    const close = el("button", { type: "button", textContent: "Close" });
    close.onclick = () => this.close();
    this.panel.replaceChildren(el("h2", { textContent: "Attach an MCP resource" }), error);
    this.panel.hidden = false;
    let listing;
    try {
      listing = await json("GET", this.base());
    } catch (err) {
      error.textContent = err.message || String(err);
      this.panel.append(close);
      return;
    }
    const list = el("ul", { className: "resources" });
    for (const r of listing.resources) {
      const pick = el("button", { type: "button", textContent: `${r.server}: ${r.name || r.uri}`, title: r.uri });
      pick.onclick = () => this.attach(r, error);
      list.append(el("li", {}, pick));
    }
    if (!listing.resources.length) list.append(el("li", { textContent: "No resources." }));
    for (const [server, why] of Object.entries(listing.unavailable || {})) {
      list.append(el("li", { className: "caption", textContent: `${server}: ${why}` }));
    }
    this.panel.append(list, el("div", { className: "actions" }, close));
  }

  async attach(resource, error) {
    try {
      const query = `server=${encodeURIComponent(resource.server)}&uri=${encodeURIComponent(resource.uri)}`;
      const read = await json("GET", `${this.base()}/read?${query}`);
      const block = `<resource server="${read.server}" uri="${read.uri}">\n${read.text}\n</resource>`;
      this.box.value = this.box.value ? `${this.box.value}\n\n${block}` : block;
      this.close();
      this.box.focus();
    } catch (err) {
      error.textContent = err.message || String(err);
    }
  }
}
