"""Helpers for the service tests: real servers (thread or process), SSE parsing, backends."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Literal

import httpx
import pytest

from _ports import UvicornThread, bound_url
from pg_helpers import POSTGRES_DSN, drop_schema, require_postgres, unique_schema, with_options

HERE = Path(__file__).resolve().parent
REDIS_URL = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/12")
"""The Redis these tests write to (unique key prefixes); `TETHER_TEST_REDIS_URL` names it."""


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


@dataclass(frozen=True)
class SharedStorage:
    """A storage several `tether serve` processes share: its URL and their key prefix."""

    url: str
    prefix: str

    @property
    def args(self) -> list[str]:
        """The `tether serve` options naming it."""
        return ["--storage", self.url, "--redis-prefix", self.prefix]


@contextmanager
def shared_storage(
    kind: Literal["redis", "postgres"], name: str = "tsvc"
) -> Iterator[SharedStorage]:
    """Redis (keys under a fresh prefix) or a fresh PostgreSQL schema, emptied at the end.

    Skips (or fails under TETHER_REQUIRE_*) when the server does not answer.
    """
    schema = None
    if kind == "redis":
        redis_or_skip()
        url = REDIS_URL
    else:
        require_postgres()
        schema = unique_schema()
        url = with_options(POSTGRES_DSN, schema=schema)
    storage = SharedStorage(url, unique(name))
    try:
        yield storage
    finally:
        if schema is None:
            drop_redis_prefix(storage.prefix)
        else:
            drop_schema(schema)


ThreadServer = UvicornThread
"""uvicorn in a thread of this process on a port the OS picks (`_ports.UvicornThread`)."""


@dataclass
class ProcessServer:
    """`tether serve` in a subprocess (stdout+stderr kept for the log checks).

    The first `start()` binds port 0 and reads the port `tether serve` announces; a restart
    after `kill()` binds that port again (the clients know its URL). `stop()` is safe
    whether or not `start()` ran (or got as far as opening the log).
    """

    args: list[str]
    env: dict[str, str]
    log_path: Path
    cwd: Path = HERE

    def __post_init__(self) -> None:
        self.port = 0
        self.url = ""
        self.proc: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None  # opened by start()

    def start(self) -> ProcessServer:
        cmd = [sys.executable, "-c", "import sys; from tether.cli import main; sys.exit(main())"]
        cmd += ["serve", "--port", str(self.port), *self.args]
        if self._log is None or self._log.closed:
            self._log = open(self.log_path, "ab")  # closed in stop()
        said = self.log_path.stat().st_size  # what earlier starts wrote to the log
        self.proc = subprocess.Popen(
            cmd, cwd=self.cwd, env=self.env, stdout=self._log, stderr=subprocess.STDOUT
        )
        if not self.port:
            self.url = bound_url(self.log_path, self.proc, after=said)
            self.port = int(self.url.rsplit(":", 1)[1])
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
        if self._log is not None:  # None: start() never ran (or failed before opening it)
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
