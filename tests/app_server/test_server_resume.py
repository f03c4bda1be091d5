"""A client that drops mid-stream and reconnects with Last-Event-ID gets every event once."""

from __future__ import annotations

import httpx
from svc_agents import make_agent
from svc_helpers import SSE, ThreadServer, new_session, plan, sse

from tether.app.server import create_app

_ROUNDS = [[["tick", {"n": i}]] for i in range(4)] + ["the end of a longer answer in words"]


def _drop_after(c, sid, k):
    """Start a reply over SSE, read `k` frames, hang up; return them."""
    with c.stream("POST", f"/v1/sessions/{sid}/replies", json=plan(*_ROUNDS), headers=SSE) as r:
        got = []
        for frame in sse(r):
            got.append(frame)
            if len(got) == k:
                break
    return got


def _rest(c, sid, last_id):
    with c.stream(
        "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": str(last_id)}
    ) as r:
        return list(sse(r))


def test_drop_at_ten_points_and_reconnect(backend, test_dir):
    storage, events = backend.pair()
    app = create_app({"planner": make_agent(latency=0.01)}, storage, events=events)
    with ThreadServer(app) as server, httpx.Client(base_url=server.url, timeout=30) as c:
        sid = new_session(c)
        total = None
        for point in range(10):
            k = 1 + point * 2
            head = _drop_after(c, sid, k)
            assert len(head) == k
            rest = _rest(c, sid, head[-1].id)
            got = head + rest
            with c.stream(
                "GET", f"/v1/sessions/{sid}/events?after={head[0].id - 1}", headers=SSE
            ) as r:
                logged = list(sse(r))
            assert [f.id for f in got] == [f.id for f in logged]
            assert [f.data["id"] for f in got] == [f.data["id"] for f in logged]
            assert len({f.data["id"] for f in got}) == len(got)
            assert got[0].event == "reply_start" and got[-1].event == "reply_end"
            total = total or len(got)
            assert len(got) == total  # every reply logged the same events, none lost
        assert total is not None and total > 19
        assert c.get(f"/v1/sessions/{sid}").json()["status"] == "idle"
