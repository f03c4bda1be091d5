"""A client that has seen a reply's end can start the next reply at once: never a 409.

The events that end a reply are logged in the same step as the lease is released
(`Runs._finish`), so nobody can read the end while the lease is still held.
"""

from __future__ import annotations

from svc_helpers import SSE, new_session, plan, sse


def test_the_next_reply_starts_the_moment_the_last_one_ends(live):
    with live.client() as c:
        sid = new_session(c)
        for i in range(20):
            body = plan([["tick", {"n": i}]], f"done {i}")
            if i % 4 == 3:  # the JSON answer comes once the run's end marker is logged
                r = c.post(f"/v1/sessions/{sid}/replies", json=body)
                assert r.status_code == 200 and r.json()["status"] == "completed", (i, r.text)
                continue
            with c.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as s:
                assert s.status_code == 200, (i, s.read())
                for frame in sse(s):
                    if frame.event == "reply_end":
                        break  # the next message goes out now, before this stream closes
                else:
                    raise AssertionError(f"reply {i} did not end")
        messages = c.get(f"/v1/sessions/{sid}/messages").json()["messages"]
        assert len(messages) == 40 and live.runs() == [f"tick {i}" for i in range(20)]
