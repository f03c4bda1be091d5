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


def test_the_panel_names_the_sub_agent_and_its_rule_may_reach_the_parent(
    ui: UI, server: Server
) -> None:
    page = open_chat(ui, server)
    send(page, "delegate to the scout")
    panel = page.locator("section[aria-label=Confirmation]")
    expect(panel).to_contain_text("The scout sub-agent needs your confirmation")
    expect(panel.locator("legend")).to_have_text("scout wants to run Bash(mkdir -p scouted)")
    expect(page.get_by_role("checkbox", name="Bash(mkdir:*)")).to_be_checked()
    parents = page.get_by_role("checkbox", name="Also remember these rules in the parent agents")
    expect(parents).not_to_be_checked()
    parents.check()
    with page.expect_request(lambda r: r.method == "POST" and "/replies" in r.url) as sent:
        page.get_by_role("button", name="Allow always", exact=True).click()
    [answer] = sent.value.post_data_json["input"]["confirm_results"]
    assert answer["rules_scope"] == "agent_and_parents"
    assert "/" in answer["tool_call"]["id"]  # the qualified id of the scout's call
    assert answer["tool_call"]["metadata"]["agent_path"] == ["scout"]
    expect(conversation(page)).to_contain_text("The scout said: Scouted: success.")
    # the parent remembers Bash(mkdir:*): its own mkdir calls run without asking (a
    # question would stay unanswered and the reply never end)
    send(page, "make dirs, always")
    expect(conversation(page)).to_contain_text("Ran 2 commands.")
    expect(page.get_by_role("button", name="Allow always", exact=True)).to_have_count(0)


def test_the_parents_own_call_has_no_parent_box(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "make dirs, always")
    panel = page.locator("section[aria-label=Confirmation]")
    expect(panel.locator("legend")).to_have_text("Bash")
    expect(panel).to_contain_text("A call needs your confirmation")
    expect(
        page.get_by_role("checkbox", name="Also remember these rules in the parent agents")
    ).to_have_count(0)
    page.get_by_role("button", name="Deny", exact=True).click()
