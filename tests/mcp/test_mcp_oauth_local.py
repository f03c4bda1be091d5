"""OAuth against a real local authorization server (`servers/oauth_server.py`, the SDK's):
a login whose browser step is a scripted HTTP client following the redirect, the token
refreshed once expired, the token file 0600, and no token in state, events or logs."""

from __future__ import annotations

import logging
import socket
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from _ports import reporting_server
from tether.agent import Agent
from tether.mcp import FileTokenStore, HttpMCPConfig, MCPClient, OAuthConfig, loopback_authorize
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext
from tether.state import AgentState
from tether.testing import tool_results
from tether.tool import Toolkit

SERVER = Path(__file__).parent / "servers" / "oauth_server.py"


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The server's MCP URL and its grants file."""
    grants = tmp_path / "grants"
    with reporting_server(SERVER, "--grants", grants) as (_, port):
        yield f"http://127.0.0.1:{port}/mcp", grants


def free_redirect() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/callback"


async def browser(url: str) -> None:
    """The user's browser: open the authorization URL and follow its redirect home."""
    async with httpx.AsyncClient(follow_redirects=True, timeout=30) as http:
        landed = await http.get(url)
    assert landed.status_code == 200 and b"login received" in landed.content


async def test_login_refresh_and_no_token_anywhere(
    locked: tuple[str, Path], tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    url, grants = locked
    redirect = free_redirect()
    store = FileTokenStore(tmp_path / "tokens")
    client = MCPClient(
        "locked",
        True,
        HttpMCPConfig(url=url, auth=OAuthConfig(redirect_uri=redirect)),
        token_store=store,
        authorize=loopback_authorize(redirect, browser, timeout=30),
    )
    call = ScriptedChatModel.tool_call("mcp__locked__whoami", {}, id="c1")
    model = ScriptedChatModel([AssistantMsg("a", [call]), AssistantMsg("a", "Done.")])
    state = AgentState(permission_context=PermissionContext(allow_rules=["mcp__locked__whoami"]))
    agent = Agent("bot", "p", model, toolkit=Toolkit(mcps=[client]), state=state)
    caplog.set_level(logging.DEBUG)
    async with agent.toolkit:
        events = [e async for e in agent.reply_stream(UserMsg("user", "who am I?"))]
    [result] = tool_results(events)
    assert result.output == "a logged-in client"
    # The first token came back as already expired: the next request refreshed it.
    assert grants.read_text().split() == ["authorization_code", "refresh_token"]
    [token_file] = (tmp_path / "tokens").iterdir()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    saved = await store.load(url)
    assert saved is not None
    secrets = [saved["tokens"]["access_token"], saved["tokens"]["refresh_token"]]
    seen = [
        agent.state.model_dump_json(),
        *(e.model_dump_json() for e in events),
        caplog.text,
    ]
    for secret in secrets:
        assert all(secret not in text for text in seen)
