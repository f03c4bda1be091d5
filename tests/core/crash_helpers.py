"""Shared by the crash and race tests: storages in temp places, and the worker process."""

from __future__ import annotations

import json
import os
import secrets
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tether.app.storage import RedisStorage, SQLiteStorage, StorageBase

WORKER = str(Path(__file__).with_name("crash_worker.py"))
KEY = ("u", "agent", "s")


def redis_or_skip() -> None:
    """Skip without a Redis on 127.0.0.1:6379, unless `TETHER_REQUIRE_REDIS=1` (then fail)."""
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
    except OSError:
        if os.environ.get("TETHER_REQUIRE_REDIS") == "1":
            pytest.fail("TETHER_REQUIRE_REDIS=1 but no Redis answers on 127.0.0.1:6379")
        pytest.skip("no Redis on 127.0.0.1:6379 (set TETHER_REQUIRE_REDIS=1 to fail instead)")


@dataclass
class Place:
    """Where one test's sessions live."""

    backend: str
    path: str = ""
    prefix: str = ""

    def storage(self) -> StorageBase:
        if self.backend == "sqlite":
            return SQLiteStorage(self.path)
        return RedisStorage(host="127.0.0.1", port=6379, key_prefix=self.prefix)

    def config(self, **more: Any) -> dict[str, Any]:
        return {"backend": self.backend, "path": self.path, "prefix": self.prefix, **more}


@asynccontextmanager
async def place(backend: str, tmp_path: Path) -> AsyncIterator[Place]:
    """A SQLite file in `tmp_path`, or a fresh Redis key prefix deleted afterwards."""
    if backend == "sqlite":
        yield Place("sqlite", path=str(tmp_path / "sessions.db"))
        return
    redis_or_skip()
    import redis.asyncio as aioredis

    prefix = f"tether-core-{secrets.token_hex(6)}"
    try:
        yield Place("redis", prefix=prefix)
    finally:
        client = aioredis.Redis(host="127.0.0.1", port=6379)
        keys = [k async for k in client.scan_iter(match=f"{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


def run_worker(config: dict[str, Any], timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """Run the worker to its end (or its SIGKILL)."""
    return subprocess.run(
        [sys.executable, WORKER, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def start_worker(config: dict[str, Any]) -> subprocess.Popen[str]:
    """Start the worker with a barrier: it prints READY, then waits for a line on stdin."""
    return subprocess.Popen(
        [sys.executable, WORKER, json.dumps({**config, "barrier": True})],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def log_lines(path: Path) -> list[str]:
    return path.read_text().splitlines() if path.exists() else []
