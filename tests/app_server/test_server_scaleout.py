"""Three `tether serve` processes on one Redis or PostgreSQL: any worker streams, resumes,
takes over."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from svc_helpers import (
    SSE,
    ProcessServer,
    SharedStorage,
    confirm_all,
    new_session,
    plan,
    server_env,
    shared_storage,
    sse,
    user,
)

KEY = "sk-scaleout-7f3a9c1e5b"


class Cluster:
    def __init__(self, tmp: Path, work: Path, storage: SharedStorage, n: int) -> None:
        keys = tmp / "keys.txt"
        keys.write_text(f"# test keys\n{KEY} alice\n")
        args = [
            "--agents", "svc_agents:agents",
            *storage.args,
            "--api-keys-file", str(keys),
            "--lease-ttl", "2",
        ]  # fmt: skip
        env = server_env(work)
        self.work = work
        self.servers = [ProcessServer(args, env, tmp / f"worker{i}.log") for i in range(n)]

    def start(self) -> None:
        for server in self.servers:
            server.start()

    def client(self, i: int) -> httpx.Client:
        return httpx.Client(
            base_url=self.servers[i].url, headers={"authorization": f"Bearer {KEY}"}, timeout=30
        )

    def runs(self) -> list[str]:
        path = self.work / "runs.log"
        return path.read_text().splitlines() if path.exists() else []

    def logs(self) -> str:
        return "".join(s.log_path.read_text() for s in self.servers)

    def stop(self) -> None:
        for server in self.servers:
            server.stop()


@pytest.fixture(scope="module", params=["redis", "postgres"])
def workers(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Cluster]:
    tmp = tmp_path_factory.mktemp("scaleout")
    work = tmp / "work"
    work.mkdir()
    with shared_storage(request.param, "tsvc-scale") as storage:
        cluster = Cluster(tmp, work, storage, 3)
        try:
            cluster.start()
            yield cluster
        finally:
            cluster.stop()


@pytest.fixture
def cluster(workers: Cluster) -> Cluster:
    """The three workers, each running (a test may have killed one), with a fresh run log."""
    for server in workers.servers:
        if server.proc is not None and server.proc.poll() is not None:
            server.stop()
            server.start()
    for path in workers.work.iterdir():
        path.unlink()
    return workers


def test_start_on_one_stream_on_another_confirm_on_the_third(cluster):
    a, b, c = cluster.client(0), cluster.client(1), cluster.client(2)
    with a, b, c:
        sid = new_session(a)
        body = plan([["tick", {"n": 1}]], [["save_note", {"name": "x", "text": "y"}]], "saved x")
        with a.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
            first = next(sse(r))  # then the client goes away
        with b.stream(
            "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": str(first.id)}
        ) as r:
            rest = list(sse(r))
        assert rest[0].id > first.id and rest[-1].event == "require_user_confirm"
        assert c.get(f"/v1/sessions/{sid}").json()["status"] == "awaiting_confirmation"
        done = c.post(f"/v1/sessions/{sid}/replies", json=confirm_all(rest[-1].data)).json()
        assert done["status"] == "completed"
        assert done["message"]["content"][-1]["text"].strip() == "saved x"
        with a.stream("GET", f"/v1/sessions/{sid}/events?after=0", headers=SSE) as r:
            ids = [f.id for f in sse(r)]
        assert ids == sorted(set(ids))
        assert cluster.runs() == ["tick 1", "save_note x"]
    assert KEY not in cluster.logs()


def test_two_replies_raced_through_two_workers(cluster):
    a, b = cluster.client(0), cluster.client(1)
    with a, b:
        sid = new_session(a)
        barrier = threading.Barrier(2)
        answers: dict[str, httpx.Response] = {}

        def send(name: str, client: httpx.Client) -> None:
            barrier.wait()
            answers[name] = client.post(
                f"/v1/sessions/{sid}/replies", json=plan([["gate", {"name": name}]], name)
            )

        threads = [threading.Thread(target=send, args=(n, cl)) for n, cl in (("ga", a), ("gb", b))]
        for t in threads:
            t.start()
        # Whichever won waits at its gate; open both so it can finish.
        while not any(line.endswith(" start") for line in cluster.runs()):
            threading.Event().wait(0.02)
        (cluster.work / "ga").touch()
        (cluster.work / "gb").touch()
        for t in threads:
            t.join(timeout=30)
        codes = sorted(r.status_code for r in answers.values())
        assert codes == [200, 409]
        assert [line for line in cluster.runs() if line.endswith(" start")].__len__() == 1
        loser = next(r for r in answers.values() if r.status_code == 409)
        assert loser.json()["type"] == "ReplyInProgressError"


def test_worker_killed_mid_reply(cluster):
    a, b = cluster.client(0), cluster.client(1)
    with a, b:
        sid = new_session(a)
        body = plan([["tick", {"n": 1}]], [["gate", {"name": "never"}]], "x")
        with a.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
            seen = []
            for frame in sse(r):
                seen.append(frame)
                if frame.event == "tool_call_end" and frame.data["tool_call"]["name"] == "gate":
                    break
            while "gate never start" not in cluster.runs():
                threading.Event().wait(0.02)
            cluster.servers[0].kill()
        # B follows the session: its stream ends once the dead worker's lease expires.
        with b.stream(
            "GET", f"/v1/sessions/{sid}/events", headers={**SSE, "Last-Event-ID": str(seen[-1].id)}
        ) as r:
            tail = [f.event for f in sse(r)]  # what the dead worker logged before it died
        assert "reply_end" not in tail and "tool_result_end" not in tail
        view = b.get(f"/v1/sessions/{sid}").json()
        assert view["status"] != "running" and view["version"] > 1  # saved at its save points
        # Continue the reply the dead worker left: the finished tool is not run again, the
        # one that was running gets an "outcome unknown" result instead of a second run.
        after = b.post(f"/v1/sessions/{sid}/replies", json={"input": None}).json()
        assert after["status"] in ("completed", "interrupted"), after
        results = [c for c in after["message"]["content"] if c["type"] == "tool_result"]
        assert [(r["name"], r["state"]) for r in results] == [
            ("tick", "success"),
            ("gate", "interrupted"),
        ]
        assert cluster.runs().count("tick 1") == 1
        assert cluster.runs().count("gate never start") == 1
        again = b.post(f"/v1/sessions/{sid}/replies", json=user("are you back?")).json()
        assert again["status"] == "completed"


def test_sigterm_stops_at_the_next_save_point_and_releases_the_lease(cluster):
    a, b = cluster.client(0), cluster.client(1)
    with a, b:
        sid = new_session(a)
        body = plan([["gate", {"name": "g"}]], "ok")
        with a.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
            for frame in sse(r):
                if frame.event == "tool_call_end":
                    break
            while "gate g start" not in cluster.runs():
                threading.Event().wait(0.02)
        proc = cluster.servers[0].proc
        assert proc is not None
        proc.terminate()
        log = cluster.servers[0].log_path
        while "Waiting for application shutdown" not in log.read_text():
            threading.Event().wait(0.02)  # it takes no new replies from here on
        (cluster.work / "g").touch()
        proc.wait(timeout=30)
        view = b.get(f"/v1/sessions/{sid}").json()
        assert view["status"] == "idle"  # released, not left to expire
        with b.stream("GET", f"/v1/sessions/{sid}/events?after=0", headers=SSE) as r:
            events = list(sse(r))
        assert (
            events[-1].event == "error" and events[-1].data["error_type"] == "ServiceClosingError"
        )
        done = b.post(f"/v1/sessions/{sid}/replies", json={"input": None}).json()
        assert done["status"] == "completed"
        assert done["message"]["content"][-1]["text"].strip() == "ok"
        assert cluster.runs() == ["gate g start", "gate g end"]  # saved, never run again
