"""The seed's two human-in-the-loop walkthroughs, driven entirely over HTTP."""

from __future__ import annotations

from svc_helpers import confirm_all, new_session, plan, stream_reply


def test_confirm_with_accepted_suggested_rules(live):
    with live.client() as c:
        sid = new_session(c)
        frames = stream_reply(c, sid, plan([["save_note", {"name": "a", "text": "x"}]], "saved a"))
        assert frames[-1].event == "require_user_confirm"
        pause = frames[-1].data
        assert pause["tool_calls"][0]["suggested_rules"], "the pause suggests a rule"
        view = c.get(f"/v1/sessions/{sid}").json()
        assert view["status"] == "awaiting_confirmation"
        assert view["reply_id"] == pause["reply_id"]
        assert [p["name"] for p in view["pending"]] == ["save_note"]
        assert view["pending"][0]["suggested_rules"] == pause["tool_calls"][0]["suggested_rules"]
        assert live.runs() == []  # nothing ran before the user said yes

        resumed = stream_reply(c, sid, confirm_all(pause))
        assert resumed[0].event != "reply_start" and resumed[-1].event == "reply_end"
        assert resumed[0].id > frames[-1].id
        assert live.runs() == ["save_note a"]
        assert c.get(f"/v1/sessions/{sid}").json()["status"] == "idle"

        # The accepted rule allows the next call without asking.
        again = stream_reply(c, sid, plan([["save_note", {"name": "b", "text": "y"}]], "saved b"))
        assert "require_user_confirm" not in [f.event for f in again]
        assert again[-1].event == "reply_end"
        assert live.runs() == ["save_note a", "save_note b"]


def test_external_execution(live):
    with live.client() as c:
        sid = new_session(c)
        r = c.post(
            f"/v1/sessions/{sid}/replies", json=plan([["lookup", {"query": "tether"}]], "found it")
        )
        body = r.json()
        assert body["status"] == "awaiting_external"
        pause = body["events"][0]
        assert pause["type"] == "require_external_execution"
        view = c.get(f"/v1/sessions/{sid}").json()
        assert view["status"] == "awaiting_external"
        call = pause["tool_calls"][0]
        answer = {
            "input": {
                "type": "external_execution_result",
                "reply_id": pause["reply_id"],
                "execution_results": [
                    {
                        "type": "tool_result",
                        "id": call["id"],
                        "name": call["name"],
                        "output": [{"type": "text", "text": "tether is a framework"}],
                        "state": "success",
                    }
                ],
            }
        }
        done = c.post(f"/v1/sessions/{sid}/replies", json=answer).json()
        assert done["status"] == "completed"
        contents = done["message"]["content"]
        results = [b for b in contents if b["type"] == "tool_result"]
        assert results[0]["output"][0]["text"] == "tether is a framework"
        assert contents[-1]["text"].strip() == "found it"
        assert c.get(f"/v1/sessions/{sid}").json()["status"] == "idle"
