"""`/mcp` under a pty: a server that answers 401 shows `needs login` and the fix;
`/mcp login` explains a server without OAuth; `/mcp logout` and bad usage."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest


class _Locked(BaseHTTPRequestHandler):
    def _deny(self) -> None:
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _deny

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def locked(project: Path) -> Iterator[None]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Locked)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://127.0.0.1:{server.server_address[1]}/mcp"
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"tracker": {"url": url}}}))
    try:
        yield
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def test_mcp_status_login_logout(terminal, script, locked) -> None:
    term = terminal("--trust-folder", "--model", script([]))
    term.prompt_ready(1)
    term.type("/mcp")
    term.wait_for(r"tracker: needs login, 0 tools")
    term.wait_for(r"run `/mcp login tracker`")
    term.prompt_ready(2)
    term.type("/mcp login tracker")
    term.wait_for(r"tracker: no OAuth configured")
    term.prompt_ready(3)
    term.type("/mcp logout tracker")
    term.wait_for(r"tracker: logged out")
    term.prompt_ready(4)
    term.type("/mcp login nobody")
    term.wait_for(r"usage: /mcp, /mcp login NAME, /mcp logout NAME \(servers: tracker\)")
    assert term.leave() == 0


FEATURES = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "features_server.py"


def test_a_server_prompt_runs_as_a_slash_command(terminal, script, project, home) -> None:
    import sys

    servers = {"feat": {"command": sys.executable, "args": [str(FEATURES)]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    term = terminal("--trust-folder", "--model", script([{"text": "Looks fine to me."}]))
    term.prompt_ready(1)
    term.type("/mcp__feat__review rust focus=style")
    term.wait_for("Looks fine to me.")
    term.prompt_ready(2)
    term.type("/mcp__feat__nope")
    term.wait_for(r"feat has no prompt 'nope'; it has: review")
    assert term.leave() == 0
    saved = b"".join(p.read_bytes() for p in (home / "tether").rglob("sessions.db*"))
    assert b"Review this rust code for style." in saved  # the model got the filled prompt
