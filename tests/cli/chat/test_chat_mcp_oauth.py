"""`/mcp login` end to end under a pty against a real local authorization server: the
"browser" is this test, following the printed URL's redirect to the chat's loopback port;
then the server's tool works and the token file is 0600."""

from __future__ import annotations

import json
import re
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from terminal import Terminal, chat_env

SERVER = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "oauth_server.py"


@pytest.fixture
def locked(project: Path, tmp_path: Path) -> Iterator[Path]:
    grants = tmp_path / "grants"
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--grants", str(grants)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        redirect = f"http://127.0.0.1:{s.getsockname()[1]}/callback"
    url = f"http://127.0.0.1:{int(line.split()[1])}/mcp"
    servers = {"locked": {"url": url, "auth": {"redirect_uri": redirect}}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    try:
        yield grants
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


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
