"""A user's MCP OAuth login through two `tether serve` workers on one Redis: started on one
worker, the browser's callback lands on the other, and a reply on either worker then uses
the user's tokens (a real local authorization server, `tests/mcp/servers/oauth_server.py`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from svc_helpers import (
    REDIS_URL,
    SSE,
    ProcessServer,
    drop_redis_prefix,
    new_session,
    plan,
    redis_or_skip,
    server_env,
    sse,
    unique,
)

from _oauth_browser import PUBLIC, follow_login
from _ports import reporting_server

KEY = "sk-mcp-oauth-workers-51c0"
OAUTH_SERVER = Path(__file__).resolve().parent.parent / "mcp" / "servers" / "oauth_server.py"


@pytest.fixture
def workers(tmp_path: Path) -> Iterator[list[ProcessServer]]:
    redis_or_skip()
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{KEY} alice\n")
    prefix = unique("tsvc-oauth")
    args = ["--agents", "mcp_oauth_svc:agents", "--storage", REDIS_URL, "--redis-prefix", prefix]
    args += ["--api-keys-file", str(keys)]
    servers = [ProcessServer(args, {}, tmp_path / f"w{i}.log") for i in range(2)]
    with reporting_server(OAUTH_SERVER) as (_, oauth_port):
        env = server_env(
            tmp_path,
            TETHER_TEST_OAUTH_MCP=f"http://127.0.0.1:{oauth_port}/mcp",
            # The public URL a load balancer answers (the workers' ports are not known
            # before they start); the test's browser step delivers the redirect to worker 1.
            TETHER_TEST_CALLBACK_BASE=PUBLIC,
        )
        try:
            for server in servers:
                server.env = env
                server.start()
            yield servers
        finally:
            for server in servers:
                server.stop()
            drop_redis_prefix(prefix)


def _client(server: ProcessServer) -> httpx.Client:
    return httpx.Client(base_url=server.url, headers={"authorization": f"Bearer {KEY}"}, timeout=60)


def _logged_in(client: httpx.Client, sid: str) -> bool:
    [server] = client.get(f"/v1/sessions/{sid}/mcp-servers").json()["servers"]
    return bool(server["logged_in"])


def test_a_login_started_on_one_worker_completes_through_the_other(
    workers: list[ProcessServer],
) -> None:
    with _client(workers[0]) as a, _client(workers[1]) as b:
        sid = new_session(a, "bot")
        assert a.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"}).is_success
        started = a.post(f"/v1/sessions/{sid}/mcp-servers/locked/login").json()
        assert started["status"] == "open_url"
        landed = follow_login(started["authorization_url"], workers[1].url)
        assert landed.url.port == workers[1].port  # the callback reached the other worker
        assert landed.status_code == 200 and "login received" in landed.text
        deadline = time.monotonic() + 30
        while not _logged_in(b, sid):
            assert time.monotonic() < deadline, "the login did not finish"
        for client in (a, b):
            body = plan([["mcp__locked__whoami", {}]], "done")
            with client.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
                results = [f.data for f in sse(r) if f.event == "tool_result_end"]
            assert ["a logged-in client" in str(d["tool_result"]["output"]) for d in results] == [
                True
            ]
