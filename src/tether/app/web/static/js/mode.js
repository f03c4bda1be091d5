// The permission mode selector: shows the session's `permission_mode` and changes it with
// `PATCH /v1/sessions/{id}`. The server refuses a change while a reply runs (409); the
// select then goes back to the stored mode and the error is shown.

import { json } from "./api.js";

/** The modes of `tether.permission.PermissionMode`, with what each does. */
export const MODES = [
  ["default", "Default: ask before changes"],
  ["accept_edits", "Accept edits in the work dirs"],
  ["explore", "Explore: read-only"],
  ["bypass", "Bypass: run without asking"],
  ["dont_ask", "Don't ask: deny what would ask"],
];

/** Binds the select; `guard(fn)` runs an action and shows its error. */
export class ModeSelect {
  constructor(select, guard) {
    this.select = select;
    this.sessionId = null;
    this.mode = "default";
    select.replaceChildren(...MODES.map(([value, text]) => new Option(text, value)));
    select.onchange = () => guard(() => this.change(select.value));
    this.show(null, "default");
  }

  /** Show session `id`'s mode (no session: disabled). */
  show(id, mode) {
    this.sessionId = id;
    this.mode = mode || "default";
    this.select.value = this.mode;
    this.select.disabled = !id;
  }

  async change(mode) {
    const id = this.sessionId;
    try {
      const view = await json("PATCH", `/v1/sessions/${encodeURIComponent(id)}`, { permission_mode: mode });
      if (this.sessionId === id) this.show(id, view.permission_mode);
    } catch (err) {
      if (this.sessionId === id) this.select.value = this.mode;
      throw err;
    }
  }
}
