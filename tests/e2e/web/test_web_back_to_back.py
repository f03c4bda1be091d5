"""The web UI sends the next message the moment a reply's end arrives: never a 409.

The server logs a reply's end in the same step as it releases the session's lease
(`Runs._finish`), so a page that has seen `reply_end` finds the session free.
"""

from __future__ import annotations

from webui import UI, Server, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None

ROUNDS = 20

# Runs in the page: every `POST .../replies` status is recorded, and the handler of each
# batch of events sends the next message right after the batch with `reply_end` is applied
# (the page's own `send`, as Enter would), until ROUNDS messages went out.
_SEND_ON_END = """(rounds) => {
  const app = window.tether.app;
  window.replyStatuses = [];
  const fetchOnce = window.fetch;
  window.fetch = async (input, init) => {
    const res = await fetchOnce(input, init);
    const url = typeof input === "string" ? input : input.url;
    if (url.endsWith("/replies")) window.replyStatuses.push(res.status);
    return res;
  };
  let sent = 1;
  const onBatch = app.onBatch.bind(app);
  app.onBatch = (id, events, arrived) => {
    onBatch(id, events, arrived);
    if (sent < rounds && events.some((ev) => ev.type === "reply_end")) {
      sent += 1;
      document.getElementById("message").value = `back to back ${sent}`;
      app.send();
    }
  };
}"""


def test_the_next_message_goes_out_the_moment_the_reply_ends(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    page.evaluate(_SEND_ON_END, ROUNDS)
    send(page, "back to back 1")
    chat = conversation(page)
    expect(chat.locator(".msg.assistant")).to_have_count(ROUNDS)
    expect(chat.locator(".msg.assistant").last).to_contain_text(f"You said: back to back {ROUNDS}")
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("idle")
    assert page.evaluate("window.replyStatuses") == [200] * ROUNDS
    said = chat.locator(".msg.user").all_inner_texts()
    assert said == [f"back to back {n}" for n in range(1, ROUNDS + 1)], said
