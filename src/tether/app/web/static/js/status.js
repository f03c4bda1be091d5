// The status bar: connection state ("Reconnecting…"), errors, the context usage meter and
// one badge per active plugin with its rounds left.

const $ = (id) => document.getElementById(id);

function compact(n) {
  return n >= 10000 ? `${Math.round(n / 1000)}k` : n >= 1000 ? `${(n / 1000).toFixed(1)}k` : String(n);
}

/** Updates the header's live parts. */
export class Status {
  constructor() {
    this.plugins = new Map();
    this.window = 0;
  }

  /** The agent in use (its context window sizes the meter, when the server gives it). */
  agent(agent) {
    this.window = Number(agent?.context_length || agent?.model?.context_length || 0);
    this.usage(null);
  }

  reset() {
    this.plugins.clear();
    this.renderPlugins();
    this.usage(null);
    this.error("");
  }

  connection(state) {
    const el = $("connection");
    el.textContent = state === "reconnecting" ? "Reconnecting…" : "";
    el.dataset.state = state || "live";
  }

  error(text) {
    const el = $("error");
    el.textContent = text;
    el.hidden = !text;
  }

  usage(usage) {
    const meter = $("context-meter");
    const label = $("context-label");
    const used = usage ? usage.input_tokens + usage.output_tokens : 0;
    meter.hidden = !usage;
    label.hidden = !usage;
    if (!usage) return;
    if (this.window) {
      meter.max = this.window;
      meter.value = Math.min(used, this.window);
      meter.high = this.window * 0.8;
      label.textContent = `${compact(used)} / ${compact(this.window)} tokens`;
    } else {
      meter.hidden = true;
      label.textContent = `${compact(used)} tokens`;
    }
    meter.setAttribute("aria-valuetext", label.textContent);
  }

  plugin(ev) {
    if (ev.type === "plugin_activated") this.plugins.set(ev.module_name, ev.rounds_left);
    else this.plugins.delete(ev.module_name);
    this.renderPlugins();
  }

  renderPlugins() {
    const box = $("plugins");
    box.replaceChildren(
      ...[...this.plugins].map(([name, rounds]) => {
        const span = document.createElement("span");
        span.className = "badge plugin";
        span.textContent = `${name} · ${rounds} ${rounds === 1 ? "round" : "rounds"} left`;
        return span;
      }),
    );
    box.hidden = this.plugins.size === 0;
  }
}
