"""The web UI's tool cards and confirmations against a real `tether serve`."""

from __future__ import annotations

import os

from webui import ROOT, UI, Server, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


def test_bash_output_streams_into_its_card(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "show live output")  # echo, test and sleep only: it runs without asking
    running = conversation(page).get_by_role("article", name="Bash tool call, running")
    expect(running.locator(".output")).to_have_text("first line\n")  # before the command ends
    server.open_gate("output")
    done = conversation(page).get_by_role("article", name="Bash tool call, done")
    expect(done.locator(".output")).to_contain_text("first line\nsecond line")
    expect(conversation(page)).to_contain_text("The command finished.")


def test_write_and_edit_show_diffs(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "write a file")
    card = conversation(page).get_by_role("article", name="Write tool call, asking")
    expect(card.locator(".diff .add")).to_have_text(["+ line one", "+ line two", "+ "])
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(conversation(page)).to_contain_text("Write: success.")
    send(page, "now edit the file")
    card = conversation(page).get_by_role("article", name="Edit tool call, asking")
    expect(card.locator(".diff .del")).to_have_text(["- line two"])
    expect(card.locator(".diff .add")).to_have_text(["+ line 2"])
    expect(card.locator(".caption")).to_have_text("notes.txt")
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(conversation(page)).to_contain_text("Edit: success.")
    assert (server.workdir / "notes.txt").read_text() == "line one\nline 2\n"


def test_two_concurrent_tool_cards(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "run two concurrent lookups")
    cards = conversation(page).get_by_role("article", name="lookup tool call, running")
    expect(cards).to_have_count(2)  # both run at once: the lookups wait on one gate
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("running")
    server.open_gate("lookups")
    expect(conversation(page).get_by_role("article", name="lookup tool call, done")).to_have_count(
        2
    )
    expect(conversation(page)).to_contain_text("Both lookups finished: alpha found, beta found.")
    expect(cards.first).to_have_count(0)


def test_allow_always_runs_the_next_matching_call(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "hello first")
    expect(conversation(page)).to_contain_text("That is all.")
    send(page, "make dirs, always")
    card = conversation(page).get_by_role("article", name="Bash tool call, asking")
    expect(card).to_contain_text("$ mkdir -p made0")
    rule = page.get_by_role("checkbox", name="Bash(mkdir:*)")
    expect(rule).to_be_checked()
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("awaiting you")
    if os.environ.get("TETHER_UPDATE_DOCS_SCREENSHOT") == "1":
        page.screenshot(path=str(ROOT / "docs" / "img" / "web-ui.png"))
    page.get_by_role("button", name="Allow always", exact=True).click()
    expect(conversation(page)).to_contain_text("Ran 2 commands.")
    done = conversation(page).get_by_role("article", name="Bash tool call, done")
    expect(done).to_have_count(2)
    expect(done.nth(1)).to_contain_text("$ mkdir -p made1")
    expect(page.get_by_role("button", name="Allow always", exact=True)).to_have_count(
        0
    )  # never asked again
    assert (server.workdir / "made0").is_dir() and (server.workdir / "made1").is_dir()


def test_deny_shows_the_models_follow_up(ui: UI, server: Server) -> None:
    (server.workdir / "precious").mkdir(exist_ok=True)
    page = open_chat(ui, server)
    send(page, "deny this one")
    expect(
        conversation(page).get_by_role("article", name="Bash tool call, asking")
    ).to_contain_text("rm -rf precious")
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(conversation(page).get_by_role("article", name="Bash tool call, denied")).to_be_visible()
    expect(conversation(page)).to_contain_text(
        "Understood: the call was denied, so I left it alone."
    )
    assert (server.workdir / "precious").is_dir()


def test_edited_input_is_what_runs(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "always, but edited")
    page.get_by_text("Edit input").click()
    page.get_by_role("textbox", name="Input of Bash").fill('{"command": "mkdir -p edited0"}')
    page.get_by_role("button", name="Allow once", exact=True).click()
    first = conversation(page).get_by_role("article", name="Bash tool call").first
    expect(first).to_contain_text("$ mkdir -p edited0")
    expect(
        conversation(page).get_by_role("article", name="Bash tool call, asking")
    ).to_contain_text(
        "mkdir -p made1"  # allowed once: the next call asks again
    )
    assert (server.workdir / "edited0").is_dir()
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(conversation(page)).to_contain_text("Ran 2 commands.")


def test_several_pending_calls_are_answered_together(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "fetch both pages")
    expect(page.get_by_text("2 calls need your confirmation")).to_be_visible()
    asking = conversation(page).get_by_role("article", name="fetch_page tool call, asking")
    expect(asking).to_have_count(2)
    page.get_by_role("checkbox", name="Allow this fetch_page call").nth(1).uncheck()
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(conversation(page)).to_contain_text(
        "Results: success: page of https://a.ex; denied: The user rejected"
    )
    expect(
        conversation(page).get_by_role("article", name="fetch_page tool call, done")
    ).to_have_count(1)
    expect(
        conversation(page).get_by_role("article", name="fetch_page tool call, denied")
    ).to_have_count(1)


def test_external_tool_result_is_submitted(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "deploy it")
    expect(
        conversation(page).get_by_role("article", name="deploy tool call, awaiting result")
    ).to_be_visible()
    page.get_by_role("textbox", name="Result of deploy").fill("deployed 2.0 to staging")
    page.get_by_role("button", name="Submit result", exact=True).click()
    expect(conversation(page)).to_contain_text("The deploy reported: deployed 2.0 to staging")
    expect(conversation(page).get_by_role("article", name="deploy tool call, done")).to_be_visible()


def test_stop_ends_a_paused_reply(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "deploy, then change my mind")
    expect(page.get_by_role("button", name="Submit result", exact=True)).to_be_visible()
    page.get_by_role("button", name="Stop").click()
    expect(
        conversation(page).get_by_role("article", name="deploy tool call, interrupted")
    ).to_be_visible()
    expect(page.get_by_role("button", name="Submit result", exact=True)).to_have_count(0)
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("idle")
    card = conversation(page).locator(".tool-card[data-state=interrupted]")
    expect(card.locator(".output.human")).to_have_text(
        "Stopped: the reply was interrupted before this call finished."
    )
    page.reload()  # the stored result reads the same
    expect(card.locator(".output.human")).to_have_text(
        "Stopped: the reply was interrupted before this call finished."
    )


def test_a_pause_answered_in_another_tab_clears_here(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "deny from the other tab")
    expect(page.get_by_role("button", name="Deny", exact=True)).to_be_visible()
    other = ui.page(page.url)
    other.get_by_role("button", name="Deny", exact=True).click()
    expect(conversation(other)).to_contain_text("the call was denied")
    # This tab sees it at its next session-list refresh (every 5 s).
    expect(page.get_by_role("button", name="Deny", exact=True)).to_have_count(0, timeout=15_000)
    expect(conversation(page).get_by_role("article", name="Bash tool call, denied")).to_be_visible()
    expect(conversation(page)).to_contain_text("the call was denied")
