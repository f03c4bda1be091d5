// The API key prompt: a modal dialog shown when the server answers 401. The key is kept in
// sessionStorage (this tab only); every request waiting for it is retried once it is given.

import { AuthRequired, apiKey, setApiKey } from "./api.js";

const $ = (id) => document.getElementById(id);

/** Asks for an API key and retries what needed it. */
export class KeyPrompt {
  constructor() {
    this.waiters = [];
    $("auth-dialog").addEventListener("cancel", (e) => e.preventDefault()); // a key is needed
    $("auth-form").addEventListener("submit", (e) => {
      e.preventDefault();
      setApiKey($("api-key").value.trim());
      $("api-key").value = "";
      $("auth-dialog").close();
      const waiters = this.waiters;
      this.waiters = [];
      for (const resolve of waiters) resolve();
    });
  }

  /** Show the dialog (saying why) and resolve once a key is given. */
  ask() {
    $("auth-message").textContent = apiKey()
      ? "The server refused that API key (401 Unauthorized). Enter a valid key."
      : "This server needs an API key (it answered 401 Unauthorized).";
    setApiKey("");
    if (!$("auth-dialog").open) $("auth-dialog").showModal();
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Run `fn`; on 401 ask for a key and run it again, until it passes or fails otherwise. */
  async retry(fn) {
    for (;;) {
      try {
        return await fn();
      } catch (err) {
        if (!(err instanceof AuthRequired)) throw err;
        await this.ask();
      }
    }
  }
}
