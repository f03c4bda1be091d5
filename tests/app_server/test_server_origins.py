"""`tether serve` refuses other origins: a `Host` allow-list (DNS rebinding) and a cross-site
check on every state-changing route, over real HTTP on a keyless server."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from svc_agents import make_agent
from svc_helpers import ThreadServer, new_session, plan, stream_reply

from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage
from tether.errors import ConfigError

_SAFE = {"GET", "HEAD", "OPTIONS"}


@dataclass
class Keyless:
    url: str
    port: int
    app: Any
    dir: Path

    def client(self, **kw: Any) -> httpx.Client:
        return httpx.Client(base_url=self.url, timeout=30, **kw)

    def runs(self) -> list[str]:
        path = self.dir / "runs.log"
        return path.read_text().splitlines() if path.exists() else []


@contextmanager
def _serve(tmp_path: Path, **options: Any) -> Iterator[tuple[ThreadServer, Any]]:
    app = create_app(
        {"planner": make_agent()},
        SQLiteStorage(tmp_path / "s.db"),
        events=SQLiteEventLog(tmp_path / "e.db"),
        **options,
    )
    with ThreadServer(app) as server:
        yield server, app


@pytest.fixture
def keyless(tmp_path: Path, test_dir: Path) -> Iterator[Keyless]:
    with _serve(tmp_path) as (server, app):
        yield Keyless(server.url, server.port, app, test_dir)


def _state(c: httpx.Client) -> Any:
    sessions = c.get("/v1/sessions").json()["sessions"]
    return [
        (
            c.get(f"/v1/sessions/{s['session_id']}").json(),
            c.get(f"/v1/sessions/{s['session_id']}/messages").json(),
        )
        for s in sessions
    ]


def _changing_routes(app: Any, sid: str) -> list[tuple[str, str]]:
    """Every (method, path) of the app's API that may change state, its path filled in."""
    found = []
    for path, operations in app.openapi()["paths"].items():
        filled = path.replace("{session_id}", sid).replace("{agent_id}", "assistant")
        filled = filled.replace("{request_id}", "req-1").replace("{name}", "some-server")
        assert "{" not in filled, f"a path parameter this test does not fill: {path}"
        found += [(m.upper(), filled) for m in sorted(operations) if m.upper() not in _SAFE]
    return found


CROSS_SITE = {
    "another site": {"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
    "another port": {"Origin": "http://127.0.0.1:1", "Sec-Fetch-Site": "same-site"},
    "origin only": {"Origin": "http://evil.example:8000"},
    "fetch site only": {"Sec-Fetch-Site": "cross-site"},
    "null origin": {"Origin": "null"},
    "https twin": {"Origin": "https://127.0.0.1"},
}


@pytest.mark.parametrize("attack", sorted(CROSS_SITE))
def test_every_state_changing_route_refuses_another_site(keyless: Keyless, attack: str) -> None:
    with keyless.client() as c:
        paused = new_session(c, session_id="paused")
        stream_reply(c, paused, plan([["save_note", {"name": "n", "text": "t"}]], "x"))
        idle = new_session(c, session_id="idle")
        before, runs = _state(c), keyless.runs()
        routes = _changing_routes(keyless.app, paused) + _changing_routes(keyless.app, idle)
        methods = {m for m, _ in routes}
        assert {"POST", "PATCH", "DELETE"} <= methods
        assert {p for _, p in routes} >= {
            "/v1/sessions",
            f"/v1/sessions/{idle}",
            f"/v1/sessions/{idle}/replies",
            f"/v1/sessions/{idle}/interrupt",
        }
        routes += [("POST", "/"), ("PUT", "/v1/sessions"), ("DELETE", "/nowhere")]
        # The A2A mount is not in the OpenAPI document: its JSON-RPC and HTTP+JSON routes.
        routes += [("POST", "/a2a/assistant/"), ("POST", "/a2a/assistant/rest/message:send")]
        bodies: list[dict[str, Any]] = [
            {},
            {"json": {"permission_mode": "accept_edits", "agent_id": "planner"}},
            {"json": {"input": {"role": "user", "content": "hi"}}},
            {"content": b"x", "headers": {"content-type": "text/plain"}},
        ]
        for method, path in routes:
            for body in bodies:
                headers = {**CROSS_SITE[attack], **body.get("headers", {})}
                sent = {k: v for k, v in body.items() if k != "headers"}
                r = c.request(method, path, headers=headers, **sent)
                assert r.status_code == 403, (method, path, body, r.status_code, r.text)
                problem = r.json()
                assert problem["type"] == "CrossSiteRequestError" and problem["status"] == 403
                assert "another site" in problem["detail"]
        assert _state(c) == before and keyless.runs() == runs


def test_same_origin_and_non_browser_clients_pass(keyless: Keyless) -> None:
    own = keyless.url
    with keyless.client() as c:
        sid = new_session(c)
        browser = {"Origin": own, "Sec-Fetch-Site": "same-origin"}
        r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "explore"}, headers=browser)
        assert r.status_code == 200, r.text
        typed = {"Sec-Fetch-Site": "none"}  # the user opened the URL themselves
        r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "default"}, headers=typed)
        assert r.status_code == 200, r.text
        loop = {"Origin": f"http://localhost:{keyless.port}", "Host": f"localhost:{keyless.port}"}
        assert c.post(f"/v1/sessions/{sid}/interrupt", headers=loop).status_code == 202
        r = c.post(f"/v1/sessions/{sid}/replies", json={"input": {"role": "user", "content": "hi"}})
        assert r.status_code == 200 and r.json()["status"] == "completed"  # no Origin: a program
        assert c.delete(f"/v1/sessions/{sid}", headers=browser).status_code == 204


@pytest.mark.parametrize(
    "host",
    ["evil.example", "evil.example:{port}", "127.0.0.1:1", "localhost", "127.0.0.2:{port}",
     "localhost.:{port}", "localhost:{port}x", "[::1", "", "127.0.0.1:{port}@evil.example"],
)  # fmt: skip
def test_keyless_service_refuses_other_hosts(keyless: Keyless, host: str) -> None:
    with keyless.client() as c:
        for method, path in [("GET", "/v1/sessions"), ("GET", "/"), ("POST", "/v1/sessions")]:
            r = c.request(
                method, path, headers={"Host": host.format(port=keyless.port)},
                json={"agent_id": "planner"} if method == "POST" else None,
            )  # fmt: skip
            assert r.status_code == 421, (method, path, r.status_code, r.text)
            assert r.json()["type"] == "UntrustedHostError"
            assert "--allowed-hosts" in r.json()["detail"]
            assert f"localhost:{keyless.port}" in r.json()["detail"]
        assert c.get("/v1/sessions").json()["sessions"] == []


@pytest.mark.parametrize(
    "host", ["127.0.0.1:{port}", "localhost:{port}", "[::1]:{port}", "LOCALHOST:{port}"]
)
def test_keyless_service_answers_its_loopback_names(keyless: Keyless, host: str) -> None:
    with keyless.client() as c:
        r = c.get("/v1/agents", headers={"Host": host.format(port=keyless.port)})
        assert r.status_code == 200, r.text


def test_allowed_hosts_replace_the_default(tmp_path: Path, test_dir: Path) -> None:
    with _serve(tmp_path, allowed_hosts=["tether.example", "*.corp.example:9"]) as (server, _):
        with httpx.Client(base_url=server.url, timeout=30) as c:
            ok = ["tether.example", "tether.example:1234", "a.corp.example:9", "b.a.corp.example:9"]
            for host in ok:
                assert c.get("/healthz", headers={"Host": host}).status_code == 200, host
            for host in ["127.0.0.1", "corp.example:9", "a.corp.example:8", "evil.example"]:
                assert c.get("/healthz", headers={"Host": host}).status_code == 421, host


def test_with_api_keys_any_host_unless_listed(tmp_path: Path, test_dir: Path) -> None:
    keys = {"key-alice-0123456789": "alice"}
    auth = {"authorization": "Bearer key-alice-0123456789"}
    (tmp_path / "a").mkdir()
    with _serve(tmp_path / "a", api_keys=keys) as (server, _):
        with httpx.Client(base_url=server.url, timeout=30, headers=auth) as c:
            assert c.get("/v1/sessions", headers={"Host": "tether.example"}).status_code == 200
            r = c.post(
                "/v1/sessions",
                json={"agent_id": "planner"},
                headers={"Origin": "http://evil.example"},
            )
            assert r.status_code == 403 and r.json()["type"] == "CrossSiteRequestError"
    (tmp_path / "b").mkdir()
    with _serve(tmp_path / "b", api_keys=keys, allowed_hosts="tether.example") as (server, _):
        with httpx.Client(base_url=server.url, timeout=30, headers=auth) as c:
            assert c.get("/v1/sessions", headers={"Host": "tether.example"}).status_code == 200
            assert c.get("/v1/sessions").status_code == 421


@pytest.mark.parametrize(
    "bad", [["a*b"], ["*"[:0]], ["*."], ["x:port"], ["[::1"], [], ["h:123456"]]
)
def test_malformed_allowed_hosts_are_a_config_error(tmp_path: Path, bad: list[str]) -> None:
    with pytest.raises(ConfigError, match="allowed host"):
        create_app({"planner": make_agent()}, SQLiteStorage(tmp_path / "s.db"), allowed_hosts=bad)
