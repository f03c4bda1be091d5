"""Helpers for the service tests: real servers (thread or process), SSE parsing, backends."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
import uvicorn

HERE = Path(__file__).resolve().parent
REDIS_URL = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/12")
"""The Redis these tests write to (unique key prefixes); `TETHER_TEST_REDIS_URL` names it."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def redis_or_skip() -> None:
    """Skip (or fail under TETHER_REQUIRE_REDIS=1) when Redis does not answer."""
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return
    except OSError:
        if os.environ.get("TETHER_REQUIRE_REDIS") == "1":
            pytest.fail("Redis is required (TETHER_REQUIRE_REDIS=1) but 127.0.0.1:6379 is down")
        pytest.skip("Redis is not running on 127.0.0.1:6379")


def drop_redis_prefix(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(REDIS_URL)
    try:
        for name in client.scan_iter(match=f"{prefix}*", count=500):
            client.delete(name)
    finally:
        client.close()


class ThreadServer:
    """uvicorn serving an app in a thread of this process, on a port the OS picks.

    It binds port 0 and reports the port it got (`port`, `url` once entered): a port picked
    first and bound later can be taken in between by a parallel test.
    """

    def __init__(self, app: Any) -> None:
        self.port = 0
        self.url = ""
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> ThreadServer:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        self.port = int(self.server.servers[0].sockets[0].getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@dataclass
class ProcessServer:
    """`tether serve` in a subprocess (stdout+stderr kept for the log checks)."""

    args: list[str]
    env: dict[str, str]
    log_path: Path
    cwd: Path = HERE

    def __post_init__(self) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.proc: subprocess.Popen[bytes] | None = None

    def start(self) -> ProcessServer:
        cmd = [sys.executable, "-c", "import sys; from tether.cli import main; sys.exit(main())"]
        cmd += ["serve", "--port", str(self.port), *self.args]
        self._log = open(self.log_path, "ab")  # closed in stop()
        self.proc = subprocess.Popen(
            cmd, cwd=self.cwd, env=self.env, stdout=self._log, stderr=subprocess.STDOUT
        )
        deadline = time.monotonic() + 30
        while True:
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"tether serve did not start: {self.log_path.read_text()}")
            time.sleep(0.05)

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(timeout=10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self._log.closed:
            self._log.close()


def server_env(test_dir: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    env["TETHER_TEST_DIR"] = str(test_dir)
    env.pop("TETHER_API_KEYS", None)
    env.update(extra)
    return env


@dataclass(frozen=True)
class Frame:
    """One SSE frame."""

    id: int
    event: str
    data: dict[str, Any]


def sse(response: httpx.Response) -> Iterator[Frame]:
    """Parse an SSE response into frames (comments skipped)."""
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if not line:
            if "data" in fields:
                yield Frame(int(fields["id"]), fields["event"], json.loads(fields["data"]))
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value


def user(text: str) -> dict[str, Any]:
    return {"input": {"role": "user", "content": text}}


def plan(*rounds: Any) -> dict[str, Any]:
    return user(json.dumps(list(rounds)))


SSE = {"accept": "text/event-stream"}


def new_session(client: httpx.Client, agent_id: str = "planner", **body: Any) -> str:
    r = client.post("/v1/sessions", json={"agent_id": agent_id, **body})
    assert r.status_code == 201, r.text
    return str(r.json()["session_id"])


def stream_reply(client: httpx.Client, sid: str, body: dict[str, Any]) -> list[Frame]:
    with client.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=SSE) as r:
        assert r.status_code == 200, r.read()
        return list(sse(r))


def confirm_all(pause: dict[str, Any], accept_rules: bool = True) -> dict[str, Any]:
    return {
        "input": {
            "type": "user_confirm_result",
            "reply_id": pause["reply_id"],
            "confirm_results": [
                {
                    "confirmed": True,
                    "tool_call": c,
                    "rules": c["suggested_rules"] if accept_rules else [],
                }
                for c in pause["tool_calls"]
            ],
        }
    }


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"
