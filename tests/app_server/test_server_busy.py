"""One reply at a time: 409, `?if_busy=interrupt`, `/interrupt`; and a failing provider."""

from __future__ import annotations

from svc_helpers import SSE, new_session, plan, sse, stream_reply, user


def _until(frames, event_type):
    seen = []
    for frame in frames:
        seen.append(frame)
        if frame.event == event_type:
            return seen
    raise AssertionError(f"the stream ended before {event_type}: {[f.event for f in seen]}")


def test_second_reply_gets_409_with_the_running_reply_id(live):
    with live.client() as c, live.client() as other:
        sid = new_session(c)
        body = plan([["gate", {"name": "g1"}]], "through")
        with c.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
            frames = sse(r)
            head = _until(frames, "tool_call_end")
            reply_id = head[0].data["reply_id"]
            busy = other.post(f"/v1/sessions/{sid}/replies", json=user("me too"))
            assert busy.status_code == 409
            assert busy.json()["type"] == "ReplyInProgressError"
            assert busy.json()["reply_id"] == reply_id
            view = other.get(f"/v1/sessions/{sid}").json()
            assert view["status"] == "running" and view["reply_id"] == reply_id
            assert other.delete(f"/v1/sessions/{sid}").status_code == 409
            live.open_gate("g1")
            rest = list(frames)
        assert rest[-1].event == "reply_end", str(rest[-1].data)
        messages = c.get(f"/v1/sessions/{sid}/messages").json()["messages"]
        assert [m["role"] for m in messages] == ["user", "assistant"]  # "me too" never landed


def test_if_busy_interrupt_stops_the_running_reply_then_starts(live):
    with live.client() as c, live.client() as other:
        sid = new_session(c)
        with c.stream(
            "POST",
            f"/v1/sessions/{sid}/replies",
            json=plan([["gate", {"name": "never"}]], "x"),
            headers=SSE,
        ) as r:
            frames = sse(r)
            _until(frames, "tool_call_end")
            second = other.post(
                f"/v1/sessions/{sid}/replies?if_busy=interrupt", json=user("instead")
            )
            rest = list(frames)
        assert second.status_code == 200, second.text
        assert second.json()["status"] == "completed"
        assert rest[-1].event == "reply_end", str(rest[-1].data)
        final = rest[-1].data["msg"]["content"]
        assert [b["state"] for b in final if b["type"] == "tool_result"] == ["interrupted"], str(
            final
        )
        assert "gate never end" not in live.runs()
        roles = [m["role"] for m in c.get(f"/v1/sessions/{sid}/messages").json()["messages"]]
        assert roles == ["user", "assistant", "user", "assistant"]


def test_interrupt_is_idempotent_while_running(live):
    with live.client() as c, live.client() as other:
        sid = new_session(c)
        with c.stream(
            "POST",
            f"/v1/sessions/{sid}/replies",
            json=plan([["gate", {"name": "never"}]], "x"),
            headers=SSE,
        ) as r:
            frames = sse(r)
            _until(frames, "tool_call_end")
            first = other.post(f"/v1/sessions/{sid}/interrupt")
            assert first.status_code == 202 and first.json()["status"] == "interrupting"
            repeat = other.post(f"/v1/sessions/{sid}/interrupt")
            assert repeat.status_code == 202
            rest = list(frames)
        assert rest[-1].event == "reply_end", str(rest[-1].data)
        assert c.get(f"/v1/sessions/{sid}").json()["status"] == "idle"
        idle = c.post(f"/v1/sessions/{sid}/interrupt")
        assert idle.status_code == 202 and idle.json() == {"status": "idle", "reply_id": None}
        assert (
            c.post(f"/v1/sessions/{sid}/replies", json=user("after")).json()["status"]
            == "completed"
        )


def test_interrupt_a_paused_reply(live):
    with live.client() as c:
        sid = new_session(c)
        frames = stream_reply(c, sid, plan([["save_note", {"name": "n", "text": "t"}]], "x"))
        last = frames[-1]
        assert last.event == "require_user_confirm"
        r = c.post(f"/v1/sessions/{sid}/interrupt")
        assert r.status_code == 202 and r.json()["reply_id"] == last.data["reply_id"]
        with c.stream(
            "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": str(last.id)}
        ) as s:
            rest = list(sse(s))
        assert rest[-1].event == "reply_end", str(rest[-1].data)
        assert [f.data["tool_result"]["state"] for f in rest if f.event == "tool_result_end"] == [
            "interrupted"
        ]
        assert c.get(f"/v1/sessions/{sid}").json()["status"] == "idle"
        assert live.runs() == []


def test_provider_error_ends_the_stream_with_an_error_event(live):
    with live.client() as c:
        sid = new_session(c)
        frames = stream_reply(c, sid, plan([["tick", {"n": 1}]], "!error"))
        assert frames[-1].event == "error"
        assert frames[-1].data["error_type"] == "ModelResponseError"
        assert live.runs() == ["tick 1"]
        body = c.post(f"/v1/sessions/{sid}/replies", json=user("still there?")).json()
        assert body["status"] == "completed"
        assert live.runs() == ["tick 1"]  # the finished tool did not run again
        failed = c.post(f"/v1/sessions/{sid}/replies", json=plan("!error")).json()
        assert failed["status"] == "error" and failed["events"][0]["type"] == "error"
