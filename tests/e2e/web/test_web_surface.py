"""The web UI as people judge it (issue 38): empty state, titles, following the stream,
type-ahead, keys, wording, banners, and screenshots at three widths in both themes."""

from __future__ import annotations

from typing import Any

import httpx
from web_agents import EXAMPLES, PART_TWO, gate_name
from webui import UI, Server, conversation, open_chat, send

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


def box(locator: Any) -> dict[str, float]:
    found = locator.bounding_box()
    assert found is not None, locator
    return found


def inside(inner: Any, outer: Any) -> bool:
    """Is `inner` (a locator) entirely within `outer`'s visible box?"""
    a, b = box(inner), box(outer)
    return a["y"] >= b["y"] - 1 and a["y"] + a["height"] <= b["y"] + b["height"] + 1


def bottom_visible(inner: Any, outer: Any) -> bool:
    """Is the bottom edge of `inner` within `outer`'s visible box?"""
    a, b = box(inner), box(outer)
    end = a["y"] + a["height"]
    return b["y"] - 1 <= end <= b["y"] + b["height"] + 1


def title_of(page: Any) -> Any:
    return page.locator("#session-list [aria-current=page] .session-title")


def test_empty_state_examples_and_titles(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    intro = page.get_by_role("region", name="About this agent")
    expect(intro.get_by_role("heading")).to_have_text("helper")
    expect(intro).to_contain_text("You are a scripted helper for browser tests.")
    examples = intro.get_by_role("button")
    expect(examples).to_have_text(EXAMPLES)
    examples.first.click()  # sends it, and names the session after it
    chat = conversation(page)
    expect(chat.locator(".msg.user")).to_have_text(EXAMPLES[0])
    expect(chat).to_contain_text("That is all.")
    expect(intro).to_have_count(0)
    expect(title_of(page)).to_have_text(EXAMPLES[0])
    # Renamed in place: Enter saves, and the title is stored.
    page.locator("#session-list [aria-current=page]").locator("..").locator(
        ".session-rename"
    ).click()
    field = page.get_by_role("textbox", name="Session title")
    expect(field).to_have_value(EXAMPLES[0])
    field.fill("Greeting check")
    field.press("Enter")
    expect(title_of(page)).to_have_text("Greeting check")
    page.reload()
    expect(title_of(page)).to_have_text("Greeting check")
    # Esc leaves the title as it was.
    page.locator("#session-list [aria-current=page]").locator("..").locator(
        ".session-rename"
    ).click()
    page.get_by_role("textbox", name="Session title").fill("not this")
    page.get_by_role("textbox", name="Session title").press("Escape")
    expect(title_of(page)).to_have_text("Greeting check")
    # Role labels: "You" over the user's messages, the agent's name over its answers.
    labels = page.evaluate(
        """() => [".msg.user", ".msg.assistant"].map((s) =>
             getComputedStyle(document.querySelector(s), "::before").content)"""
    )
    assert labels == ['"You"', '"helper"'], labels


def test_the_view_follows_the_stream_and_keeps_the_asked_call_visible(
    ui: UI, server: Server
) -> None:
    page = open_chat(ui, server)
    chat = conversation(page)
    send(page, "long then ask")
    card = chat.locator(".tool-card[data-state=asking]")
    expect(page.get_by_role("region", name="Confirmation")).to_be_visible()
    expect(card).to_be_visible()
    assert bottom_visible(card, chat), (box(card), box(chat))  # not hidden behind the panel
    page.keyboard.press("y")  # focus is on the confirmation: y allows once
    output = chat.locator(".tool-card .output")
    expect(output).to_contain_text("started")
    expect(page.get_by_role("region", name="Confirmation")).to_have_count(0)
    assert bottom_visible(output, chat), (box(output), box(chat))
    server.open_gate("scrolled")
    last = chat.get_by_text("All done at the bottom.")
    expect(last).to_be_visible()
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()
    assert inside(last, chat), (box(last), box(chat))
    # Scrolled up while a reply streams: the view stays put and offers the jump.
    send(page, "gated, read back")
    expect(chat).to_contain_text("The first half")
    jump = page.get_by_role("button", name="Jump to latest")
    expect(jump).to_be_hidden()
    chat.hover()
    page.mouse.wheel(0, -1500)
    expect(jump).to_be_visible()
    top = chat.evaluate("el => el.scrollTop")
    server.open_gate(gate_name("gated, read back"))
    end = chat.get_by_text(PART_TWO.split(".")[0])
    expect(end).to_be_attached()
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()
    assert abs(chat.evaluate("el => el.scrollTop") - top) < 2  # not pulled down
    assert not inside(end, chat)
    jump.click()
    expect(jump).to_be_hidden()
    assert inside(end, chat), (box(end), box(chat))
    page.screenshot(path=str(ui.folder / "followed.png"))


def test_typed_ahead_messages_wait_their_turn(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    chat = conversation(page)
    send(page, "gated, first in line")
    expect(chat).to_contain_text("The first half")
    send(page, "queued one")
    send(page, "queued two")
    queued = chat.locator(".msg.user.queued")
    expect(queued).to_have_text(["queued one", "queued two"])
    expect(page.get_by_role("textbox", name="Message")).to_have_value("")
    assert page.locator("#error").is_hidden()  # no "a reply is running" complaint
    page.screenshot(path=str(ui.folder / "queued.png"))
    server.open_gate(gate_name("gated, first in line"))
    expect(chat.locator(".msg.assistant").last).to_contain_text("You said: queued two")
    expect(queued).to_have_count(0)
    expect(chat.locator(".msg.user")).to_have_text(
        ["gated, first in line", "queued one", "queued two"]
    )
    assert "You said: queued one" in chat.locator(".msg.assistant").nth(1).inner_text()


def test_denied_call_in_words_and_banners_beside_content(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    chat = conversation(page)
    send(page, "deny this one")
    panel = page.get_by_role("region", name="Confirmation")
    expect(panel).to_be_visible()
    # Typing while the agent waits for an answer: a banner that covers nothing.
    send(page, "and another thing")
    banner = page.get_by_role("alert").filter(has_text="waiting for you")
    expect(banner).to_be_visible()
    b, c = box(banner), box(chat)
    assert b["y"] + b["height"] <= c["y"] + 1, (b, c)  # above the conversation, not over it
    # Keys act only with focus on the confirmation, never while typing in a field.
    page.get_by_role("textbox", name="Message").press("n")
    expect(panel).to_be_visible()
    panel.get_by_role("button", name="Allow once", exact=True).focus()
    page.keyboard.press("n")
    card = chat.locator(".tool-card[data-state=denied]")
    expect(card.locator(".output.human")).to_have_text("Not run: you denied this call.")
    told = card.locator("details.told")
    expect(told.locator("pre")).to_be_hidden()
    told.locator("summary").click()
    expect(told.locator("pre")).to_contain_text("reject")  # the model-facing text, for the curious
    expect(chat).to_contain_text("Understood: the call was denied")


SIZES = {"1920": (1920, 1080), "1280": (1280, 800), "390": (390, 844)}


def test_screenshots_at_three_widths_in_both_themes(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    chat = conversation(page)
    for label, (width, height) in SIZES.items():  # the empty page of a new session
        page.set_viewport_size({"width": width, "height": height})
        intro = box(page.get_by_role("region", name="About this agent"))
        assert intro["x"] >= 0 and intro["x"] + intro["width"] <= width, (label, intro)
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.screenshot(path=str(ui.folder / f"empty-{label}-{scheme}.png"))
    send(page, "hello there")
    expect(chat).to_contain_text("That is all.")
    send(page, "deny this one, please")
    expect(page.get_by_role("region", name="Confirmation")).to_be_visible()
    for label, (width, height) in SIZES.items():
        page.set_viewport_size({"width": width, "height": height})
        user = box(chat.locator(".msg.user").first)
        answer = box(chat.locator(".msg.assistant").first)
        # One reading column: the user's right edge and the answer's left edge are close.
        assert user["x"] + user["width"] - answer["x"] <= 48 * 15 + 2, (label, user, answer)
        assert answer["x"] >= 0 and user["x"] + user["width"] <= width
        for scheme in ("light", "dark"):
            page.emulate_media(color_scheme=scheme)
            page.screenshot(path=str(ui.folder / f"chat-{label}-{scheme}.png"))
    page.emulate_media(color_scheme="light")
    page.get_by_role("button", name="Deny", exact=True).click()
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()


CSP = "default-src 'self'; frame-ancestors 'none'"


def test_the_page_works_under_a_strict_content_security_policy(ui: UI, server: Server) -> None:
    """Same-origin files only: no inline script or style, no data: URL, no CDN."""
    page = ui.context.new_page()
    ui.errors.watch(page)  # a CSP violation is a console error: the test fails on it
    ui.pages.append(page)

    def with_csp(route: Any) -> None:
        response = route.fetch()
        route.fulfill(
            response=response, headers={**response.headers, "content-security-policy": CSP}
        )

    page.route(f"{server.url}/", with_csp)
    page.goto(server.url)
    expect(page.get_by_role("button", name="New session")).to_be_enabled()
    page.get_by_role("button", name="New session").click()
    page.get_by_role("region", name="About this agent").get_by_role("button").first.click()
    chat = conversation(page)
    expect(chat).to_contain_text("That is all.")
    expect(chat.locator("pre code .tok-keyword").first).to_have_text("def")
    assert page.evaluate("document.querySelector('link[rel=icon]').href").endswith("/icon.svg")
    assert httpx.get(f"{server.url}/icon.svg").headers["content-type"].startswith("image/svg+xml")


def test_a_on_a_focused_confirmation_allows_always(ui: UI, server: Server) -> None:
    page = open_chat(ui, server)
    send(page, "make dirs, always")
    panel = page.get_by_role("region", name="Confirmation")
    expect(panel).to_be_visible()
    panel.get_by_role("button", name="Allow once", exact=True).focus()
    page.keyboard.press("a")
    expect(conversation(page)).to_contain_text("Ran 2 commands.")
    done = conversation(page).get_by_role("article", name="Bash tool call, done")
    expect(done).to_have_count(2)  # the rule chosen by the key covered the second call
    expect(panel).to_have_count(0)
