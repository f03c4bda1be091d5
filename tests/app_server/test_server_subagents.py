"""Sub-agents over `tether serve`: three workers on one Redis.

The parent's two children run in parallel; the client drops mid-child and reconnects to
another worker with `Last-Event-ID` (every event exactly once), the writer's question is
confirmed through a third worker, and every tool ran once.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from svc_helpers import (
    REDIS_URL,
    SSE,
    ProcessServer,
    confirm_all,
    drop_redis_prefix,
    new_session,
    redis_or_skip,
    server_env,
    sse,
    unique,
    user,
)

KEY = "sk-subagents-3c9e1f7a2b"


@pytest.fixture
def cluster(tmp_path: Path) -> Iterator[tuple[list[ProcessServer], Path]]:
    redis_or_skip()
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{KEY} alice\n")
    work = tmp_path / "work"
    work.mkdir()
    prefix = unique("tsvc-sub")
    args = [
        "--agents", "subagent_svc:agents", "--storage", REDIS_URL, "--redis-prefix", prefix,
        "--api-keys-file", str(keys),
    ]  # fmt: skip
    servers = [ProcessServer(args, server_env(work), tmp_path / f"worker{i}.log") for i in range(3)]
    try:
        for server in servers:
            server.start()
        yield servers, work
    finally:
        for server in servers:
            server.stop()
        drop_redis_prefix(prefix)


def test_children_stream_reconnect_mid_child_and_confirm_on_another_worker(cluster):
    import httpx

    servers, work = cluster
    a, b, c = (
        httpx.Client(base_url=s.url, headers={"authorization": f"Bearer {KEY}"}, timeout=30)
        for s in servers
    )
    with a, b, c:
        sid = new_session(a, agent_id="team")
        first: list = []
        with a.stream("POST", f"/v1/sessions/{sid}/replies", json=user("go"), headers=SSE) as r:
            for frame in sse(r):
                first.append(frame)
                inner = frame.data.get("event", {})
                if frame.event == "sub_agent" and inner.get("type") == "tool_result_start":
                    break  # the researcher's tool is running: the client goes away
        assert first[-1].data["agent_path"] == ["researcher"]
        (work / "mid").touch()
        with b.stream(
            "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": str(first[-1].id)}
        ) as r:
            rest = list(sse(r))
        assert rest[-1].event == "require_user_confirm"
        [call] = rest[-1].data["tool_calls"]
        assert call["id"] == "boss1/wri0" and call["metadata"]["agent_path"] == ["writer"]
        # Every event exactly once, in order: what A sent and what B replayed is the log.
        with c.stream("GET", f"/v1/sessions/{sid}/events?after=0", headers=SSE) as r:
            log = list(sse(r))
        assert [f.id for f in first + rest] == [f.id for f in log]
        assert len({f.id for f in log}) == len(log)
        paths = {tuple(f.data["agent_path"]) for f in log if f.event == "sub_agent"}
        assert paths == {("researcher",), ("writer",)}
        view = c.get(f"/v1/sessions/{sid}").json()
        assert view["status"] == "awaiting_confirmation", view
        done = c.post(f"/v1/sessions/{sid}/replies", json=confirm_all(rest[-1].data)).json()
        assert done["status"] == "completed", done
        assert done["message"]["content"][-1]["text"] == "all done"
    runs = (work / "runs.log").read_text().splitlines()
    assert sorted(runs) == ["publish wri0", "wait_gate res0 start"]
