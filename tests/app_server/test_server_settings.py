"""`PATCH /v1/sessions/{id}` (the permission mode) and the agents' context window."""

from __future__ import annotations

from svc_helpers import SSE, new_session, plan, sse, stream_reply


def _stored(c, sid):
    view = c.get(f"/v1/sessions/{sid}").json()
    return view["permission_mode"], view["version"]


def test_bypass_mode_runs_a_call_that_would_ask(live):
    with live.client() as c:
        sid = new_session(c)
        assert _stored(c, sid)[0] == "default"
        r = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"})
        assert r.status_code == 200, r.text
        assert r.json()["permission_mode"] == "bypass"
        assert _stored(c, sid)[0] == "bypass"
        frames = stream_reply(c, sid, plan([["save_note", {"name": "a", "text": "x"}]], "saved"))
        assert "require_user_confirm" not in [f.event for f in frames]
        assert frames[-1].event == "reply_end" and live.runs() == ["save_note a"]


def test_bad_mode_and_other_users_session_change_nothing(live):
    with live.client() as c, live.client("key-bob-9876543210") as bob:
        sid = new_session(c)
        before = _stored(c, sid)
        bad = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "yolo"})
        assert bad.status_code == 422 and bad.json()["type"] == "InvalidInputError"
        assert "bypass" in bad.json()["detail"]  # it says which modes exist
        theirs = bob.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"})
        assert theirs.status_code == 404 and theirs.json()["type"] == "SessionNotFoundError"
        extra = c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass", "x": 1})
        assert extra.status_code == 422
        assert _stored(c, sid) == before


def test_mode_change_is_refused_while_a_reply_runs(live):
    with live.client() as c, live.client() as other:
        sid = new_session(c)
        before = _stored(c, sid)
        body = plan([["gate", {"name": "g-mode"}]], "through")
        with c.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
            frames = sse(r)
            head = []
            for frame in frames:
                head.append(frame)
                if frame.event == "tool_call_end":
                    break
            busy = other.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"})
            assert busy.status_code == 409, busy.text
            assert busy.json()["type"] == "ReplyInProgressError"
            assert busy.json()["reply_id"] == head[0].data["reply_id"]
            live.open_gate("g-mode")
            rest = list(frames)
        assert rest[-1].event == "reply_end"
        mode, version = _stored(c, sid)
        assert mode == before[0] == "default" and version > before[1]  # the reply saved


def test_agents_list_their_context_window(live):
    with live.client() as c:
        agents = c.get("/v1/agents").json()["agents"]
    assert [a["context_length"] for a in agents] == [128_000]
