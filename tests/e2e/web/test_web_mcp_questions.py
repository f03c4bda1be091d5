"""The web UI answers an MCP server's questions: an elicitation as a form built from its
schema (defaults filled in), a sampling request as Allow / Refuse, against `tether serve`."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webui import UI, Server, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


@pytest.fixture
def mcp_server(tmp_path: Path, browser: Any) -> Iterator[Server]:
    args = ["--agents", "mcp_web_agents:make_agents"]
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'sessions.db'}", args=args).start()
    yield srv
    srv.stop()


def test_elicitation_form_and_sampling_confirmation(mcp_server: Server, ui: UI) -> None:
    page = open_chat(ui, mcp_server)
    send(page, "greet me")
    page.get_by_role("button", name="Allow once", exact=True).click()
    form = page.get_by_role("form", name="Question from feat")
    expect(form).to_contain_text("What is your name?")
    count = form.get_by_label("Count")
    expect(count).to_have_value("3")  # the schema's default
    form.get_by_role("button", name="Submit").click()
    expect(form.locator(".form-error")).to_have_text("Name is required")
    form.get_by_label("Name").fill("Ada")
    form.get_by_role("button", name="Submit").click()
    expect(form).to_have_count(0)
    expect(conversation(page)).to_contain_text("Greeted.")
    expect(conversation(page)).to_contain_text("hello Ada x3")

    send(page, "think")
    page.get_by_role("button", name="Allow once", exact=True).click()
    asked = page.get_by_role("region", name="Sampling request from feat")
    expect(asked).to_contain_text("user: What is 6*7?")
    asked.get_by_role("button", name="Let the model answer").click()
    expect(conversation(page)).to_contain_text("Sampled.")
    expect(conversation(page)).to_contain_text("model said: 42")


def test_a_resource_is_attached_from_the_picker(mcp_server: Server, ui: UI) -> None:
    page = open_chat(ui, mcp_server)
    page.get_by_role("button", name="Attach resource").click()
    picker = page.get_by_role("region", name="MCP resources")
    picker.get_by_role("button", name="feat: greeting").click()
    expect(picker).to_be_hidden()
    expect(page.get_by_role("textbox", name="Message")).to_have_value(
        '<resource server="feat" uri="note://greeting">\nHello from a resource.\n</resource>'
    )
