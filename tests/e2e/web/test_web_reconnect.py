"""The web UI recovers from a server killed mid-reply (Redis storage, two workers)."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from web_agents import PART_ONE, PART_TWO, gate_name
from webui import REDIS_DB, UI, Server, redis_answers, redis_cleanup

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[tuple[Server, Server]]:
    """Two `tether serve` processes on one Redis (db 11, a key prefix of this test's own)."""
    if not redis_answers():
        import os

        if os.environ.get("TETHER_REQUIRE_REDIS") == "1":
            pytest.fail("Redis is required (TETHER_REQUIRE_REDIS=1) but 127.0.0.1:6379 is closed")
        pytest.skip("no Redis on 127.0.0.1:6379 (set TETHER_REQUIRE_REDIS=1 to fail instead)")
    prefix = f"tetherweb{uuid.uuid4().hex[:8]}"
    url = f"redis://127.0.0.1:6379/{REDIS_DB}"
    args = ["--redis-prefix", prefix]
    a = Server(tmp_path, url, args=args).start()
    b = Server(tmp_path, url, args=args).start()
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()
        redis_cleanup(prefix)


def _start_gated_reply(server: Server, session_id: str) -> None:
    """Start a reply through `server` and drop the stream at its first text delta."""
    body = {"input": {"role": "user", "content": "gated reply please"}}
    headers = {"Accept": "text/event-stream"}
    url = f"{server.url}/v1/sessions/{session_id}/replies"
    with httpx.stream("POST", url, json=body, headers=headers, timeout=30) as res:
        assert res.status_code == 200, res.read()
        for line in res.iter_lines():
            if line.startswith("event: text_block_delta"):
                return  # the reply runs on in the server; only this client leaves


def test_page_recovers_after_its_server_is_killed(ui: UI, workers: tuple[Server, Server]) -> None:
    page_server, reply_server = workers
    # The browser logs the cut stream and the refused retries; the test causes both.
    ui.errors.allow(r"net::ERR_(CONNECTION_REFUSED|INCOMPLETE_CHUNKED_ENCODING)")
    session = httpx.post(f"{reply_server.url}/v1/sessions", json={"agent_id": "helper"}).json()
    _start_gated_reply(reply_server, session["session_id"])
    page = ui.page(f"{page_server.url}/#/s/{session['session_id']}")
    chat = page.get_by_role("region", name="Conversation")
    expect(chat).to_contain_text(PART_ONE.strip())  # joined mid-reply
    expect(page.locator("#session-list [aria-current=page] .badge")).to_have_text("running")
    page_server.kill()
    expect(page.get_by_role("status")).to_have_text("Reconnecting…")
    reply_server.open_gate(
        gate_name("gated reply please")
    )  # the reply goes on in the other worker while the page is cut off
    _wait_idle(reply_server, session["session_id"])
    page_server.start()
    expect(chat).to_contain_text("The end.")
    expect(page.get_by_role("status")).to_have_text("")
    reply = chat.locator(".msg.assistant").inner_text()
    assert reply.count(PART_ONE.strip()) == 1 and reply.count(PART_TWO.strip()) == 1
    assert (PART_ONE + PART_TWO).strip() in reply
    expect(page.get_by_role("button", name="Stop")).to_be_disabled()
    page.screenshot(path=str(ui.folder / "recovered.png"))


def _wait_idle(server: Server, session_id: str) -> None:
    """Follow the session's events through `server` until the reply ends."""
    url = f"{server.url}/v1/sessions/{session_id}/events"
    with httpx.stream("GET", url, params={"after": 0}, timeout=30) as res:
        types = [line for line in res.iter_lines() if line.startswith("event:")]
    assert types[-1] == "event: reply_end", types
