"""Schemathesis against `/openapi.json`: no 5xx, and no rejected request changes a session."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from svc_agents import make_agent
from svc_helpers import SSE, ThreadServer, new_session, plan, sse, stream_reply

from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage

schemathesis = pytest.importorskip("schemathesis")


def _settle(c: httpx.Client, sid: str) -> None:
    """Wait until a reply an accepted request started on the session has ended."""
    last = c.get(f"/v1/sessions/{sid}").json()["last_event_id"]
    with c.stream("GET", f"/v1/sessions/{sid}/events?after={last}", headers=SSE) as r:
        for _ in sse(r):
            pass


def _snapshot(c: httpx.Client, sid: str) -> object:
    view = c.get(f"/v1/sessions/{sid}").json()
    messages = c.get(f"/v1/sessions/{sid}/messages?limit=500").json()
    return view["version"], view["status"], messages


@pytest.mark.long
def test_fuzz_the_api_from_its_openapi_document(tmp_path, test_dir):
    db = tmp_path / "fuzz.db"
    app = create_app(
        {"planner": make_agent()},
        SQLiteStorage(db),
        events=SQLiteEventLog(tmp_path / "fuzz.events.db"),
        max_body_bytes=20_000,
    )
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        paused = new_session(c, session_id="paused")
        stream_reply(c, paused, plan([["save_note", {"name": "n", "text": "t"}]], "x"))
        idle = new_session(c, session_id="idle")
        stream_reply(c, idle, plan("hi"))
        schema = schemathesis.openapi.from_url(f"{server.url}/openapi.json")
        operations = [op.ok() for op in schema.get_all_operations()]
        assert len(operations) >= 10
        seen: dict[str, int] = {}
        for operation in operations:
            _fuzz(operation, c, server.url, (paused, idle), seen)
        assert seen.get("4xx", 0) > 0 and seen.get("2xx", 0) > 0


def _fuzz(operation, c, base_url, sessions, seen):
    @settings(
        max_examples=12,
        deadline=None,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(case=operation.as_strategy(), target=st.sampled_from([None, *sessions]))
    def check(case, target):
        if target is not None and case.path_parameters and "session_id" in case.path_parameters:
            if case.method.upper() == "DELETE":
                return  # deleting a real session is allowed; keep them for the other checks
            case.path_parameters["session_id"] = target
        before = {sid: _snapshot(c, sid) for sid in sessions}
        response = case.call(base_url=base_url, timeout=30)
        assert response.status_code < 500, (case.method, case.formatted_path, response.text)
        kind = f"{response.status_code // 100}xx"
        seen[kind] = seen.get(kind, 0) + 1
        if response.status_code < 400:
            for sid in sessions:
                if c.get(f"/v1/sessions/{sid}").status_code == 200:
                    _settle(c, sid)
        if 400 <= response.status_code < 500:
            after = {sid: _snapshot(c, sid) for sid in sessions}
            assert after == before, (case.method, case.formatted_path, response.text)
            body = response.json()
            assert set(body) >= {"type", "detail", "status"}

    check()
