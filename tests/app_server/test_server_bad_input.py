"""Bad requests get 4xx problem bodies and leave the stored session exactly as it was."""

from __future__ import annotations

from svc_helpers import new_session, plan, stream_reply


def _snapshot(c, sid):
    view = c.get(f"/v1/sessions/{sid}").json()
    messages = c.get(f"/v1/sessions/{sid}/messages?limit=500").json()
    view.pop("last_event_id")
    return view, messages


def test_rejected_requests_change_nothing(live):
    with live.client() as c:
        idle = new_session(c)
        stream_reply(c, idle, plan("hello"))
        paused = new_session(c)
        pause = stream_reply(c, paused, plan([["save_note", {"name": "a", "text": "b"}]], "x"))[-1]
        before = {sid: _snapshot(c, sid) for sid in (idle, paused)}
        wrong_reply = {
            "input": {
                "type": "user_confirm_result",
                "reply_id": "not-the-reply",
                "confirm_results": [
                    {"confirmed": True, "tool_call": pause.data["tool_calls"][0], "rules": []}
                ],
            }
        }
        smuggled = {  # a rule for another tool, wider than the asked call
            "input": {
                "type": "user_confirm_result",
                "reply_id": pause.data["reply_id"],
                "confirm_results": [
                    {
                        "confirmed": True,
                        "tool_call": pause.data["tool_calls"][0],
                        "rules": [{"tool_name": "Bash", "rule_content": "rm:*"}],
                    }
                ],
            }
        }
        cases = [
            (paused, smuggled, 422, "RuleTooBroadError"),
            (
                idle,
                {"input": {"type": "user_interrupt", "reply_id": "r"}},
                409,
                "NothingToResumeError",
            ),
            (paused, wrong_reply, 409, "ResumeError"),
            (
                paused,
                {"input": {"role": "user", "content": "new message while paused"}},
                409,
                "ResumeError",
            ),
            (idle, {"input": {"role": "wizard", "content": "x"}}, 422, "InvalidInputError"),
            (idle, {"inputs": "typo"}, 422, "InvalidInputError"),
            (idle, {"input": []}, 422, "InvalidInputError"),
        ]
        for sid, body, status, kind in cases:
            r = c.post(f"/v1/sessions/{sid}/replies", json=body)
            assert r.status_code == status, (body, r.text)
            problem = r.json()
            assert problem["type"] == kind, problem["detail"]
            assert problem["detail"] and problem["status"] == status
            assert r.headers["content-type"] == "application/problem+json"
        broken = c.post(
            f"/v1/sessions/{idle}/replies",
            content=b'{"input": {"role": "user", "content": ',
            headers={"content-type": "application/json"},
        )
        assert broken.status_code == 422 and broken.json()["type"] == "InvalidInputError"
        huge = c.post(
            f"/v1/sessions/{idle}/replies",
            json={"input": {"role": "user", "content": "x" * 2_000_000}},
        )
        assert huge.status_code == 413 and huge.json()["type"] == "RequestTooLargeError"
        assert {sid: _snapshot(c, sid) for sid in (idle, paused)} == before
        assert c.get(f"/v1/sessions/{paused}").json()["status"] == "awaiting_confirmation"
