"""The web UI against a real `tether serve`: chat, streaming, sessions, joining, auth, layout."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from web_agents import PART_ONE, PART_TWO, gate_name
from webui import UI, PageErrors, Server, artifacts_dir, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


def test_send_message_streams_markdown(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    box = page.get_by_role("textbox", name="Message")
    box.type("first line")
    box.press("Shift+Enter")
    box.type("hello there")
    assert box.input_value() == "first line\nhello there"  # Shift+Enter did not send
    box.press("Enter")
    chat = conversation(page)
    expect(chat.locator(".msg.user")).to_contain_text("hello there")
    expect(chat).to_contain_text("That is all.")
    expect(chat.locator("strong")).to_have_text("tether")
    expect(chat.locator("pre code .tok-keyword").first).to_have_text("def")
    expect(chat.locator("pre code .tok-comment")).to_have_text("# friendly")
    expect(chat.locator("li")).to_have_text(["one", "two"])
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("idle")
    timings = page.evaluate("window.tether.firstTokenTimings")
    assert len(timings) == 1, timings
    print(
        f"first token: DOM {timings[0]['dom_ms']:.2f} ms, next frame {timings[0]['frame_ms']:.2f} ms"
    )
    assert timings[0]["frame_ms"] <= 50, timings
    # The conversation comes back from /messages after a reload.
    page.reload()
    expect(conversation(page)).to_contain_text("That is all.")
    expect(conversation(page).locator(".msg.user")).to_contain_text("hello there")


def test_markup_from_the_model_is_shown_as_text(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "send some markup <i>too</i>")
    chat = conversation(page)
    expect(chat).to_contain_text('<img src=x onerror="window.pwned=1">')
    expect(chat.locator("pre code")).to_have_text("<iframe src=x></iframe>")
    expect(chat.locator("strong")).to_have_text("<b>bold?</b>")
    expect(chat.locator(".msg.user")).to_have_text("send some markup <i>too</i>")
    assert chat.locator("img, script, iframe, b, i").count() == 0
    assert chat.locator("a").count() == 0  # a javascript: link stays text
    assert page.evaluate("window.pwned") is None


def test_thinking_is_collapsed(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "think first")
    expect(conversation(page)).to_contain_text("Decided.")
    thinking = conversation(page).locator("details.thinking")
    expect(thinking.locator("summary")).to_have_text("Thinking")
    expect(thinking.get_by_text("Weighing it up quietly.")).to_be_hidden()
    thinking.locator("summary").click()
    expect(thinking.get_by_text("Weighing it up quietly.")).to_be_visible()


def test_stop_interrupts_a_streaming_reply(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "talk forever")
    expect(conversation(page)).to_contain_text(PART_ONE.strip())  # streamed before the end
    stop = page.get_by_role("button", name="Stop")
    expect(stop).to_be_enabled()
    page.keyboard.press("Escape")
    expect(stop).to_be_disabled()
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("idle")
    assert PART_TWO not in conversation(page).inner_text()
    send(page, "hello again")  # the session is usable after the stop
    expect(conversation(page)).to_contain_text("That is all.")


def test_second_tab_joins_a_running_reply(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "gated answer")
    expect(conversation(page)).to_contain_text(PART_ONE.strip())
    second = ui.page(page.url)
    expect(conversation(second)).to_contain_text(PART_ONE.strip())
    expect(second.get_by_role("button", name="Stop")).to_be_enabled()
    server.open_gate(gate_name("gated answer"))
    for tab in (page, second):
        expect(conversation(tab)).to_contain_text("The end.")
        assert conversation(tab).locator(".msg.assistant").inner_text().count(PART_ONE.strip()) == 1
        assert (PART_ONE + PART_TWO) in conversation(tab).locator(".msg.assistant").inner_text()


def test_notices_usage_and_plugin_badges(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "hello, flaky network")
    retry = conversation(page).get_by_role("note").filter(has_text="retrying")
    expect(retry).to_contain_text("scripted network blinked")
    expect(conversation(page)).to_contain_text("That is all.")
    expect(page.locator("#context-label")).to_have_text("1.2k / 32k tokens")
    send(page, "wake the notes plugin")
    expect(conversation(page)).to_contain_text("Notes are awake.")
    expect(page.locator("#plugins")).to_have_text("note · 3 rounds left")


def test_sessions_switch_and_delete(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "hello from the first session")
    expect(conversation(page)).to_contain_text("That is all.")
    first = page.url.split("#/s/")[1]
    page.get_by_role("button", name="New session").click()
    expect(conversation(page).locator(".msg")).to_have_count(0)
    send(page, "the second one says hi")
    expect(conversation(page)).to_contain_text("You said: the second one says hi")
    page.locator(f'#session-list li[data-session-id="{first}"] .session-open').click()
    expect(conversation(page)).to_contain_text("hello from the first session")
    expect(conversation(page)).not_to_contain_text("the second one says hi")
    page.once("dialog", lambda dialog: dialog.accept())
    page.locator(f'#session-list li[data-session-id="{first}"] .session-delete').click()
    expect(page.locator(f'#session-list li[data-session-id="{first}"]')).to_have_count(0)
    expect(conversation(page)).not_to_contain_text("hello from the first session")
    assert httpx.get(f"{server.url}/v1/sessions/{first}").status_code == 404


def test_an_open_tab_joins_a_reply_started_in_another(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    watcher = ui.page(page.url)  # idle, showing the same session
    expect(watcher.locator("#conversation[aria-busy=false] .intro")).to_be_visible()
    send(page, "gated, watched from elsewhere")
    # The watcher sees the reply at its next session-list refresh (every 5 s).
    expect(conversation(watcher)).to_contain_text(PART_ONE.strip(), timeout=15_000)
    server.open_gate(gate_name("gated, watched from elsewhere"))
    expect(conversation(watcher)).to_contain_text("The end.")
    assert conversation(watcher).locator(".msg.assistant").inner_text().count(PART_ONE.strip()) == 1


def test_a_tab_opened_mid_reply_shows_its_question(ui: UI, server: Server) -> None:
    """The running reply's input comes from /messages: the server must have saved the state
    at the reply's start (the `checkpoint=` save points of issue 15)."""
    page = open_chat(ui, server)
    send(page, "gated, and what was asked")
    expect(conversation(page)).to_contain_text(PART_ONE.strip())
    late = ui.page(page.url)
    expect(conversation(late)).to_contain_text(PART_ONE.strip())
    expect(conversation(late).locator(".msg.user")).to_have_text("gated, and what was asked")
    server.open_gate(gate_name("gated, and what was asked"))
    expect(conversation(late)).to_contain_text("The end.")


def test_first_load_weight(ui: UI, server: Server) -> None:
    page = ui.page(server.url)
    expect(page.get_by_role("button", name="New session")).to_be_enabled()  # loaded and ready
    sizes = page.evaluate(
        """() => performance.getEntriesByType('navigation').concat(
            performance.getEntriesByType('resource')).map(e => [e.name, e.transferSize])"""
    )
    total = sum(size for _, size in sizes)
    print(f"first load: {total} bytes transferred in {len(sizes)} requests")
    assert 0 < total <= 300_000, sizes
    assert all(url.startswith(server.url) or url.startswith("data:") for url, _ in sizes)


def test_narrow_dark_screen(browser: Any, server: Server, request: pytest.FixtureRequest) -> None:
    folder = artifacts_dir(request)
    errors = PageErrors()
    context = browser.new_context(viewport={"width": 375, "height": 700}, color_scheme="dark")
    try:
        page = errors.watch(context.new_page())
        page.goto(server.url)
        nav = page.get_by_role("navigation", name="Sessions")
        expect(nav).to_be_hidden()
        page.get_by_role("button", name="Sessions menu").click()
        page.get_by_role("button", name="New session").click()
        expect(nav).to_be_hidden()  # choosing a session closes the menu
        send(page, "hello small screen")
        expect(conversation(page)).to_contain_text("That is all.")
        assert page.evaluate("document.documentElement.scrollWidth") <= 375
        background = page.evaluate("getComputedStyle(document.body).backgroundColor")
        assert background == "rgb(13, 17, 23)", background
        page.screenshot(path=str(folder / "narrow-dark.png"), full_page=True)
    finally:
        context.close()
    assert errors.errors == []


def test_api_key_is_asked_for_on_401(
    browser: Any, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    keys = tmp_path / "keys.txt"
    keys.write_text("sekret-key-1 alice\n")
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 's.db'}", args=["--api-keys-file", str(keys)])
    srv.start()
    folder = artifacts_dir(request)
    errors = PageErrors()
    errors.allow(r"status of 401")  # the browser logs each 401 answer; the test causes them
    context = browser.new_context()
    try:
        page = errors.watch(context.new_page())
        page.goto(srv.url)
        dialog = page.get_by_role("dialog", name="API key")
        expect(dialog).to_contain_text("needs an API key")
        dialog.get_by_label("API key").fill("wrong")
        dialog.get_by_role("button", name="Use key").click()
        expect(dialog).to_contain_text("refused that API key")
        dialog.get_by_label("API key").fill("sekret-key-1")
        dialog.get_by_role("button", name="Use key").click()
        expect(dialog).to_be_hidden()
        page.get_by_role("button", name="New session").click()
        send(page, "hello with a key")
        expect(conversation(page)).to_contain_text("That is all.")
        assert page.evaluate("sessionStorage.getItem('tether.apiKey')") == "sekret-key-1"
        assert httpx.get(f"{srv.url}/v1/agents").status_code == 401
        page.screenshot(path=str(folder / "auth.png"))
    finally:
        context.close()
        srv.stop()
    assert errors.errors == []


def test_the_next_message_goes_out_the_moment_a_reply_ends(ui: UI, server: Server) -> None:
    """20 replies, each message sent from the handler that sees the last one's end: no 409."""
    page = open_chat(ui, server)
    page.evaluate(
        """() => {
          const app = window.tether.app;
          window.sentAtEnd = 0;
          window.shownErrors = [];
          const error = app.bar.error.bind(app.bar);
          app.bar.error = (text) => { if (text) window.shownErrors.push(text); error(text); };
          const onBatch = app.onBatch.bind(app);
          app.onBatch = (id, events, arrived) => {
            onBatch(id, events, arrived);
            if (events.some((e) => e.type === "reply_end") && window.sentAtEnd < 19) {
              window.sentAtEnd += 1;
              document.getElementById("message").value = `message ${window.sentAtEnd}`;
              app.send();
            }
          };
        }"""
    )
    send(page, "message 0")
    chat = conversation(page)
    expect(chat.locator(".msg.user")).to_have_count(20, timeout=30_000)
    expect(chat).to_contain_text("You said: message 19", timeout=30_000)
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("idle")
    assert page.evaluate("window.shownErrors") == []
    assert page.evaluate("window.sentAtEnd") == 19
