"""The permission mode selector, the deny reason and the context meter, in a real Chromium."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from webui import UI, Server, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Server]:
    """A keyless server whose operator allows `bypass` (the default ceiling is lower)."""
    workdir = tmp_path_factory.mktemp("web-settings")
    storage = f"sqlite:///{workdir / 'sessions.db'}"
    srv = Server(workdir, storage, args=["--max-permission-mode", "bypass"]).start()
    yield srv
    srv.stop()


def _session_id(page) -> str:
    return page.url.split("#/s/")[1]


def test_bypass_mode_runs_a_call_that_would_ask(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    mode = page.get_by_role("combobox", name="Permission mode")
    expect(mode).to_have_value("default")
    send(page, "first the mode switch, asking")
    expect(conversation(page).get_by_role("article", name="Bash tool call, asking")).to_be_visible()
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(conversation(page)).to_contain_text("The mkdir call: denied.")
    with page.expect_response(lambda r: r.request.method == "PATCH") as patched:
        mode.select_option("bypass")
    assert patched.value.status == 200
    expect(mode).to_have_value("bypass")
    send(page, "now the mode switch, bypassed")
    expect(conversation(page)).to_contain_text("The mkdir call: success.")
    expect(page.get_by_role("button", name="Allow once", exact=True)).to_have_count(
        0
    )  # never asked
    assert (server.workdir / "moded").is_dir()
    stored = httpx.get(f"{server.url}/v1/sessions/{_session_id(page)}", timeout=10).json()
    assert stored["permission_mode"] == "bypass"
    page.reload()
    expect(page.get_by_role("combobox", name="Permission mode")).to_have_value("bypass")


def test_deny_reason_reaches_the_model(ui: UI, server: Server) -> None:
    (server.workdir / "keepsake").mkdir(exist_ok=True)
    page = open_chat(ui, server)
    send(page, "remove it, with a reason")
    expect(
        conversation(page).get_by_role("article", name="Bash tool call, asking")
    ).to_contain_text("rm -rf keepsake")
    page.get_by_role("textbox", name="Reason for denying (optional)").fill("it holds my thesis")
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(conversation(page).get_by_role("article", name="Bash tool call, denied")).to_be_visible()
    said = conversation(page).locator(".msg.assistant").filter(has_text="The model was told:")
    expect(said).to_contain_text("The user rejected this call")
    expect(said).to_contain_text("it holds my thesis")
    assert (server.workdir / "keepsake").is_dir()


def test_context_meter_moves_after_a_reply(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    meter = page.get_by_role("meter", name="Context usage")
    expect(meter).to_be_hidden()  # nothing used yet
    send(page, "meter")  # the scripted model reports 100 input tokens per character
    expect(conversation(page).locator(".msg.assistant")).to_have_count(1)
    expect(meter).to_have_attribute("aria-valuetext", "510 / 32k tokens")
    assert meter.evaluate("m => [m.value, m.max]") == [510, 32000]
    send(page, "meter, a longer message")
    expect(meter).to_have_attribute("aria-valuetext", "2.3k / 32k tokens")
    assert meter.evaluate("m => m.value") == 2310
