"""Per-user OAuth over `tether serve`: each user logs in to an MCP server through the
service (the login link, the callback route), against a real local authorization server
(`servers/oauth_server.py`); two users hold separate tokens, kept in the service's notes
and never in session state, the event log, the server's logs or `/metrics`."""

from __future__ import annotations

import asyncio
import logging
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

from _ports import reporting_server
from tether.agent import Agent
from tether.app.server import create_app
from tether.app.server._mcp_users import NotesTokenStore
from tether.app.storage import SQLiteNotes, SQLiteStorage
from tether.mcp import HttpMCPConfig, MCPClient, OAuthConfig
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit

SERVER = Path(__file__).parent / "servers" / "oauth_server.py"
KEYS = {"key-alice-0123456789": "alice", "key-bob-9876543210": "bob"}
SSE = {"accept": "text/event-stream"}


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[str]:
    """The MCP URL of a server behind its own authorization server."""
    with reporting_server(SERVER, "--grants", tmp_path / "grants") as (_, port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def service(locked: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The service (its URL) over SQLite in `tmp_path/svc`; its OAuth redirect is its own."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    base = f"http://127.0.0.1:{sock.getsockname()[1]}"
    config = HttpMCPConfig(
        url=locked, auth=OAuthConfig(redirect_uri=f"{base}/v1/mcp/oauth/callback")
    )
    call = ScriptedChatModel.tool_call("mcp__locked__whoami", {}, id="c1")
    model = ScriptedChatModel([AssistantMsg("a", [call]), AssistantMsg("a", "done")] * 4)
    agent = Agent("bot", "p", model, toolkit=Toolkit(mcps=[MCPClient("locked", True, config)]))
    folder = tmp_path / "svc"
    folder.mkdir()
    app = create_app({"bot": agent}, SQLiteStorage(folder / "s.db"), api_keys=KEYS)
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="none"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "the service did not start"
        time.sleep(0.01)
    try:
        yield base, folder
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"authorization": f"Bearer {key}"}, timeout=60)


def _session(client: httpx.Client) -> str:
    sid = str(client.post("/v1/sessions", json={"agent_id": "bot"}).json()["session_id"])
    assert client.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"}).is_success
    return sid


def _servers(client: httpx.Client, sid: str) -> dict[str, Any]:
    return {s["name"]: s for s in client.get(f"/v1/sessions/{sid}/mcp-servers").json()["servers"]}


def _log_in(client: httpx.Client, sid: str) -> None:
    """The user clicks the login link; the browser follows the redirects back home."""
    started = client.post(f"/v1/sessions/{sid}/mcp-servers/locked/login")
    assert started.status_code == 200, started.text
    assert started.json()["status"] == "open_url"
    landed = httpx.get(started.json()["authorization_url"], follow_redirects=True, timeout=30)
    assert landed.status_code == 200 and "login received" in landed.text
    deadline = time.monotonic() + 30  # the login finishes in the background
    while not _servers(client, sid)["locked"]["logged_in"]:
        assert time.monotonic() < deadline, "the login did not finish"


def _ask(client: httpx.Client, sid: str) -> tuple[str, str]:
    """One reply that calls `whoami`: (its result or the reply's error, every SSE line)."""
    body = {"input": {"role": "user", "content": "who am I?"}}
    with client.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
        lines = list(r.iter_lines())
    found = [
        line
        for line in lines
        if line.startswith("data") and ("tool_result_end" in line or '"type":"error"' in line)
    ]
    assert len(found) == 1, "\n".join(lines)
    [result] = found
    return result, "\n".join(lines)


def _tokens(folder: Path, user: str, url: str) -> dict[str, Any]:
    """`user`'s tokens for `url`, read from the service's notes file."""

    async def load() -> dict[str, Any] | None:
        notes = SQLiteNotes(folder / "s.notes.db")
        try:
            return await NotesTokenStore(notes, user).load(url)
        finally:
            await notes.close()

    saved = asyncio.run(load())
    assert saved is not None
    return dict(saved["tokens"])


def test_two_users_log_in_on_their_own(
    service: tuple[str, Path], locked: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    url, folder = service
    with _client(url, "key-alice-0123456789") as alice, _client(url, "key-bob-9876543210") as bob:
        a_sid, b_sid = _session(alice), _session(bob)
        assert _servers(alice, a_sid)["locked"] == {
            "name": "locked",
            "login": True,
            "logged_in": False,
        }
        _log_in(alice, a_sid)
        a_result, a_stream = _ask(alice, a_sid)
        assert "a logged-in client" in a_result
        # Bob has not logged in: alice's login is not his.
        assert not _servers(bob, b_sid)["locked"]["logged_in"]
        b_result, b_stream = _ask(bob, b_sid)
        assert "MCPAuthorizationRequired" in b_result and "'locked'" in b_result
        _log_in(bob, b_sid)
        b_result, more = _ask(bob, b_sid)
        assert "a logged-in client" in b_result
        events = [
            alice.get(f"/v1/sessions/{a_sid}/events?after=0", headers=SSE).text,
            bob.get(f"/v1/sessions/{b_sid}/events?after=0", headers=SSE).text,
        ]
        metrics = alice.get("/metrics")
        a_tokens, b_tokens = _tokens(folder, "alice", locked), _tokens(folder, "bob", locked)
        assert a_tokens["access_token"] != b_tokens["access_token"]
        assert alice.post(f"/v1/sessions/{a_sid}/mcp-servers/locked/logout").status_code == 204
        assert not _servers(alice, a_sid)["locked"]["logged_in"]
        assert _servers(bob, b_sid)["locked"]["logged_in"]  # bob's login stays
    secrets = [t[k] for t in (a_tokens, b_tokens) for k in ("access_token", "refresh_token")]
    stored = b"".join(p.read_bytes() for p in folder.iterdir() if ".notes." not in p.name)
    seen = [a_stream, b_stream, more, *events, metrics.text, caplog.text]
    for secret in secrets:
        assert all(secret not in text for text in seen)
        assert secret.encode() not in stored


def test_the_callback_refuses_an_unknown_state(service: tuple[str, Path]) -> None:
    url, _ = service
    page = httpx.get(f"{url}/v1/mcp/oauth/callback", params={"state": "forged", "code": "x"})
    assert page.status_code == 422 and "no login waits" in page.json()["detail"]
    assert page.json()["type"] == "InvalidInputError"
