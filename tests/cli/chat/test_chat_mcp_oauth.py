"""`/mcp login` end to end under a pty against a real local authorization server: the
"browser" is this test, following the printed URL's redirect to the chat's loopback port;
then the server's tool works and the token file is 0600."""

from __future__ import annotations

import json
import re
import stat
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from terminal import Terminal, chat_env

from _ports import held_port, reporting_server

SERVER = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "oauth_server.py"


@pytest.fixture
def locked(project: Path, tmp_path: Path) -> Iterator[Path]:
    """The authorization server, and the chat's redirect port held until the test ends."""
    grants = tmp_path / "grants"
    with reporting_server(SERVER, "--grants", grants) as (_, port), held_port() as redirect:
        auth = {"redirect_uri": f"http://127.0.0.1:{redirect}/callback"}
        servers = {"locked": {"url": f"http://127.0.0.1:{port}/mcp", "auth": auth}}
        (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
        yield grants


def test_login_through_the_printed_url(home: Path, project: Path, script, locked: Path) -> None:
    steps = [
        {"tool_calls": [{"name": "mcp__locked__whoami", "input": {}}]},
        {"text": "You are logged in."},
    ]
    args = ["chat", "--trust-folder", "--model", script(steps), "--allow", "mcp__locked__whoami"]
    env = chat_env(home, BROWSER="true")  # the real "browser" is this test
    term = Terminal(args[1:], project, env, cols=1000)
    try:
        term.prompt_ready(1)
        term.type("/mcp")
        term.wait_for(r"locked: needs login")
        term.prompt_ready(2)
        term.type("/mcp login locked")
        screen = term.wait_for(r"open this address to log in to locked:\n +(http\S+)")
        match = re.search(r"open this address to log in to locked:\n +(http\S+)", screen)
        assert match is not None
        landed = httpx.get(match.group(1), follow_redirects=True, timeout=30)
        assert b"login received" in landed.content
        term.wait_for(r"locked: logged in, connected")
        term.prompt_ready(3)
        term.type("who am I?")
        screen = term.wait_for("You are logged in.")
        assert "a logged-in client" in screen
        assert term.leave() == 0
    finally:
        term.close()
    [token_file] = (home / "tether" / "mcp-tokens").iterdir()
    assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
    tokens = json.loads(token_file.read_text())["tokens"]
    saved = b"".join(p.read_bytes() for p in (home / "tether").rglob("sessions.db*"))
    assert tokens["access_token"].encode() not in saved  # never in the session
