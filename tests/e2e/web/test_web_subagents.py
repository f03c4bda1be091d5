"""The web UI shows a sub-agent's work in the tool card of its call, and asks its question."""

from __future__ import annotations

from webui import UI, Server, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


def test_the_nested_card_streams_and_its_question_is_answered(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "delegate to the scout")
    outer = conversation(page).get_by_role("article", name="scout tool call, running")
    box = outer.get_by_role("group", name="scout sub-agent")
    asking = box.get_by_role("article", name="Bash tool call, asking")
    expect(asking).to_contain_text("$ mkdir -p scouted")
    expect(box.locator("summary .state")).to_have_text("waiting for you")
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(conversation(page)).to_contain_text("The scout said: Scouted: success.")
    done = conversation(page).get_by_role("article", name="scout tool call, done")
    expect(done.get_by_role("group", name="scout sub-agent")).to_be_attached()
    expect(conversation(page).get_by_role("article", name="Bash tool call, done")).to_have_count(1)
    assert (server.workdir / "scouted").is_dir()
