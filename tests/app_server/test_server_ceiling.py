"""The operator's ceiling on the permission mode a client may set (`--max-permission-mode`)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
from svc_agents import make_agent
from svc_helpers import ProcessServer, ThreadServer, new_session, plan, server_env, stream_reply

from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage
from tether.errors import ConfigError

MODES = ["default", "accept_edits", "explore", "bypass", "dont_ask"]
UNDER = {
    "explore": {"explore"},
    "dont_ask": {"dont_ask"},
    "default": {"default", "dont_ask", "explore"},
    "accept_edits": {"accept_edits", "default", "dont_ask", "explore"},
    "bypass": set(MODES),
}


@contextmanager
def _client(tmp_path: Path, **options: Any) -> Iterator[httpx.Client]:
    app = create_app(
        {"planner": make_agent()},
        SQLiteStorage(tmp_path / "s.db"),
        events=SQLiteEventLog(tmp_path / "e.db"),
        **options,
    )
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        yield c


def _view(c: httpx.Client, sid: str) -> tuple[str, int]:
    view = c.get(f"/v1/sessions/{sid}").json()
    return view["permission_mode"], view["version"]


def test_keyless_default_ceiling_is_accept_edits(tmp_path: Path, test_dir: Path) -> None:
    with _client(tmp_path) as c:
        sid = new_session(c)
        before = _view(c, sid)
        r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"})
        assert r.status_code == 403 and r.json()["type"] == "PermissionCeilingError"
        detail = r.json()["detail"]
        assert "'accept_edits'" in detail and "--max-permission-mode" in detail
        assert "default, accept_edits, explore, dont_ask" in detail  # what may be set
        assert _view(c, sid) == before
        frames = stream_reply(c, sid, plan([["save_note", {"name": "a", "text": "x"}]], "x"))
        assert frames[-1].event == "require_user_confirm"  # still asks: nothing was widened
        assert not (test_dir / "runs.log").exists()
        r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "accept_edits"})
        assert r.status_code == 200 and r.json()["permission_mode"] == "accept_edits"
        made = c.post("/v1/sessions", json={"agent_id": "planner", "permission_mode": "bypass"})
        assert made.status_code == 422  # a session starts in `default`: no mode at creation
        assert [s["session_id"] for s in c.get("/v1/sessions").json()["sessions"]] == [sid]


@pytest.mark.parametrize("ceiling", MODES)
def test_a_patch_never_exceeds_the_ceiling(tmp_path: Path, test_dir: Path, ceiling: str) -> None:
    with _client(tmp_path, max_permission_mode=ceiling) as c:
        sid = new_session(c)
        for mode in MODES:
            before = _view(c, sid)
            r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": mode})
            if mode in UNDER[ceiling]:
                assert r.status_code == 200 and r.json()["permission_mode"] == mode, r.text
            else:
                assert r.status_code == 403, (ceiling, mode, r.text)
                assert r.json()["type"] == "PermissionCeilingError"
                assert _view(c, sid) == before


def test_with_api_keys_the_default_ceiling_is_bypass(tmp_path: Path, test_dir: Path) -> None:
    keys = {"key-alice-0123456789": "alice"}
    with _client(tmp_path, api_keys=keys) as c:
        c.headers["authorization"] = "Bearer key-alice-0123456789"
        sid = new_session(c)
        assert c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"}).status_code == 200


def test_an_unknown_ceiling_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="max_permission_mode 'yolo' is not a permission mode"):
        create_app(
            {"p": make_agent()}, SQLiteStorage(tmp_path / "s.db"), max_permission_mode="yolo"
        )


def test_serve_flags_reach_the_app(tmp_path: Path) -> None:
    storage = f"sqlite:///{tmp_path}/s.db"
    args = ["--agents", "svc_agents:agents", "--storage", storage, "--max-permission-mode"]
    server = ProcessServer(
        [*args, "default", "--allowed-hosts", "127.0.0.1,tether.example"],
        server_env(tmp_path),
        tmp_path / "serve.log",
    ).start()
    try:
        with httpx.Client(base_url=server.url, timeout=30) as c:
            sid = new_session(c)
            r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "accept_edits"})
            assert r.status_code == 403 and r.json()["type"] == "PermissionCeilingError"
            assert c.get("/healthz", headers={"Host": "tether.example"}).status_code == 200
            assert c.get("/healthz", headers={"Host": "localhost"}).status_code == 421
    finally:
        server.stop()
    said = server.log_path.read_text()
    assert "answering 127.0.0.1,tether.example; permission modes up to default" in said
