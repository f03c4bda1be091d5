"""Every route over real HTTP, on SQLite and on Redis."""

from __future__ import annotations

import pytest
from svc_helpers import SSE, new_session, plan, sse, stream_reply, user

from tether.event import event_adapter
from tether.model import ModelPrice, reset_prices, set_price


def test_agents_health_and_openapi(live):
    with live.client() as c:
        agents = c.get("/v1/agents").json()["agents"]
        assert [a["id"] for a in agents] == ["planner"]
        assert agents[0]["tools"] == ["gate", "lookup", "save_note", "tick"]
        assert agents[0]["description"] == "You follow the plan."
        assert c.get("/healthz").json() == {"status": "ok"}
        assert c.get("/readyz").json() == {"status": "ready"}
        paths = c.get("/openapi.json").json()["paths"]
        for path in (
            "/v1/sessions",
            "/v1/sessions/{session_id}",
            "/v1/sessions/{session_id}/replies",
            "/v1/sessions/{session_id}/events",
            "/v1/sessions/{session_id}/interrupt",
            "/v1/sessions/{session_id}/messages",
        ):
            assert path in paths


def test_auth_is_required(live):
    with live.client(key=None) as c:
        r = c.get("/v1/agents")
        assert r.status_code == 401
        assert r.json()["type"] == "AuthenticationError"
    with live.client(key="not-a-key") as c:
        assert c.get("/v1/sessions").status_code == 401


def test_session_crud(live):
    with live.client() as c:
        sid = new_session(c, session_id="s-1", metadata={"title": "first"})
        assert sid == "s-1"
        view = c.get("/v1/sessions/s-1").json()
        assert view["status"] == "idle" and view["version"] == 1
        assert view["metadata"] == {"title": "first"} and view["pending"] == []
        again = c.post("/v1/sessions", json={"agent_id": "planner", "session_id": "s-1"})
        assert again.status_code == 409 and again.json()["type"] == "SessionConflictError"
        unknown = c.post("/v1/sessions", json={"agent_id": "nope"})
        assert unknown.status_code == 404 and unknown.json()["type"] == "UnknownAgentError"
        other = new_session(c)
        listed = [
            s["session_id"] for s in c.get("/v1/sessions?agent_id=planner").json()["sessions"]
        ]
        assert sorted(listed) == sorted(["s-1", other])
        assert c.delete("/v1/sessions/s-1").status_code == 204
        gone = c.get("/v1/sessions/s-1")
        assert gone.status_code == 404 and gone.json()["type"] == "SessionNotFoundError"
        assert c.delete("/v1/sessions/s-1").status_code == 404


def test_json_reply_and_messages(live):
    with live.client() as c:
        sid = new_session(c)
        r = c.post(f"/v1/sessions/{sid}/replies", json=user("hello there"))
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["status"] == "completed"
        assert body["message"]["content"][0]["text"].strip() == "echo: hello there"
        for i in range(3):
            c.post(f"/v1/sessions/{sid}/replies", json=user(f"more {i}"))
        page = c.get(f"/v1/sessions/{sid}/messages?limit=3").json()
        assert page["total"] == 8 and len(page["messages"]) == 3
        assert page["messages"][-1]["role"] == "assistant" and page["next_before"] == 5
        older = c.get(f"/v1/sessions/{sid}/messages?limit=10&before=5").json()
        assert [m["role"] for m in older["messages"]] == ["user", "assistant"] * 2 + ["user"]
        assert older["next_before"] is None
        assert c.get(f"/v1/sessions/{sid}").json()["version"] > 4  # saved at every save point


@pytest.fixture
def priced_plan_model():
    set_price("plan", ModelPrice(input=2.0, output=10.0))
    yield
    reset_prices()


def test_session_json_shows_token_totals_and_cost(live, priced_plan_model):
    with live.client() as c:
        sid = new_session(c)
        fresh = c.get(f"/v1/sessions/{sid}").json()["usage"]
        assert (fresh["input_tokens"], fresh["output_tokens"], fresh["cost"]) == (0, 0, None)
        for text in ("one", "two"):
            assert c.post(f"/v1/sessions/{sid}/replies", json=user(text)).status_code == 200
        usage = c.get(f"/v1/sessions/{sid}").json()["usage"]
        assert (usage["input_tokens"], usage["output_tokens"]) == (20, 10)
        # 2 calls x (10 input x $2 + 5 output x $10) per million tokens
        assert usage["cost"] == pytest.approx(2 * (10 * 2.0 + 5 * 10.0) / 1e6)
        schema = c.get("/openapi.json").json()["components"]["schemas"]["SessionView"]
        assert "usage" in schema["required"]


def test_sse_reply_frames_are_the_library_events(live):
    with live.client() as c:
        sid = new_session(c)
        frames = stream_reply(c, sid, plan([["tick", {"n": 1}]], [["tick", {"n": 2}]], "all done"))
        ids = [f.id for f in frames]
        assert ids == sorted(ids) and len(set(ids)) == len(ids)
        for f in frames:
            event = event_adapter.validate_python(f.data)
            assert str(event.type) == f.event
        assert frames[0].event == "reply_start" and frames[-1].event == "reply_end"
        assert [
            f.data["tool_result"]["output"] for f in frames if f.event == "tool_result_end"
        ] == [
            "tick 1",
            "tick 2",
        ]
        assert live.runs() == ["tick 1", "tick 2"]


def test_events_replay_after_and_last_event_id(live):
    with live.client() as c:
        sid = new_session(c)
        first = stream_reply(c, sid, user("one"))
        second = stream_reply(c, sid, user("two"))
        with c.stream("GET", f"/v1/sessions/{sid}/events?after=0", headers=SSE) as r:
            everything = list(sse(r))
        assert [f.id for f in everything] == [f.id for f in first + second]
        cut = first[-1].id
        with c.stream(
            "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": str(cut)}
        ) as r:
            later = list(sse(r))
        assert [f.data["id"] for f in later] == [f.data["id"] for f in second]
        with c.stream("GET", f"/v1/sessions/{sid}/events?after={second[-1].id}", headers=SSE) as r:
            assert list(sse(r)) == []  # nothing runs: the stream ends at once
        bad = c.get(f"/v1/sessions/{sid}/events", headers={"Last-Event-ID": "x"})
        assert bad.status_code == 422 and bad.json()["type"] == "InvalidInputError"


def test_deleted_session_loses_its_log(live):
    with live.client() as c:
        new_session(c, session_id="again")
        old = stream_reply(c, "again", user("before"))
        assert c.delete("/v1/sessions/again").status_code == 204
        new_session(c, session_id="again")
        with c.stream("GET", "/v1/sessions/again/events?after=0", headers=SSE) as r:
            assert list(sse(r)) == []
        fresh = stream_reply(c, "again", user("after"))
        assert fresh[0].id > old[-1].id  # numbers are never reused


def test_other_users_sessions_are_404(live):
    with live.client() as alice, live.client(key="key-bob-9876543210") as bob:
        sid = new_session(alice)
        stream_reply(alice, sid, user("secret"))
        version = alice.get(f"/v1/sessions/{sid}").json()["version"]
        for method, path in (
            ("GET", f"/v1/sessions/{sid}"),
            ("GET", f"/v1/sessions/{sid}/messages"),
            ("GET", f"/v1/sessions/{sid}/events?after=0"),
            ("POST", f"/v1/sessions/{sid}/interrupt"),
            ("DELETE", f"/v1/sessions/{sid}"),
        ):
            r = bob.request(method, path)
            assert r.status_code == 404, (method, path)
            assert "secret" not in r.text
        r = bob.post(f"/v1/sessions/{sid}/replies", json=user("hi"))
        assert r.status_code == 404
        assert bob.get("/v1/sessions").json()["sessions"] == []
        assert alice.get(f"/v1/sessions/{sid}").json()["version"] == version
