"""Helpers for the storage tests: a private redis-server, key-prefix cleanup."""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import redis.asyncio as aioredis

from tether.app.storage import RedisStorage, SQLiteStorage, StorageBase

REDIS_URL = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
"""The suite's Redis (as `tests/conftest.py`): its own database, never a developer's db 0."""
REDIS_HOST = urlsplit(REDIS_URL).hostname or "127.0.0.1"
REDIS_PORT = urlsplit(REDIS_URL).port or 6379
REDIS_DB = int(urlsplit(REDIS_URL).path.lstrip("/") or 0)


async def drop_prefix(client: aioredis.Redis, prefix: str) -> None:
    """Delete every key under `prefix:`."""
    keys = [k async for k in client.scan_iter(match=f"{prefix}:*", count=500)]
    if keys:
        await client.delete(*keys)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RedisServer:
    """A private `redis-server` with AOF persistence (fsync on every write) in a tmp dir."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [
                "redis-server",
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(self.directory),
                "--save",
                "",
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
                "--protected-mode",
                "no",
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
        )
        assert self.process.stdout is not None
        for line in self.process.stdout:  # wait for readiness on its own log, no sleeps
            if b"Ready to accept connections" in line:
                break
        else:
            raise RuntimeError(f"redis-server on port {self.port} did not start")
        self.process.stdout.close()

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=10)
        self.process = None


def sqlite_path(tmp_path: Path) -> str:
    return os.fspath(tmp_path / "sessions.db")


def sqlite_rows(path: str | os.PathLike[str]) -> list[tuple[object, ...]]:
    """Every row tether keeps in a SQLite file, read with a plain connection."""
    import sqlite3

    db = sqlite3.connect(path, isolation_level=None)
    try:
        sessions = db.execute("SELECT * FROM tether_sessions ORDER BY sid").fetchall()
        messages = db.execute("SELECT * FROM tether_messages ORDER BY sid, seq").fetchall()
    finally:
        db.close()
    return [("session", *row) for row in sessions] + [("message", *row) for row in messages]


async def redis_keys(client: aioredis.Redis, prefix: str) -> dict[bytes, object]:
    """Every key under `prefix:` with its type, value and whether it expires."""
    out: dict[bytes, object] = {}
    async for key in client.scan_iter(match=f"{prefix}:*", count=500):
        kind = (await client.type(key)).decode()
        value: object
        if kind == "hash":
            value = sorted((await client.hgetall(key)).items())
        elif kind == "list":
            value = await client.lrange(key, 0, -1)
        elif kind == "set":
            value = sorted(await client.smembers(key))
        else:
            value = await client.get(key)
        out[key] = (kind, value, await client.ttl(key) > 0)
    return out


@dataclass
class Backend:
    """One backend under test: new storages over the same data, and its raw contents."""

    name: str
    path: str
    prefix: str
    client: aioredis.Redis

    def make(self) -> StorageBase:
        if self.name == "sqlite":
            return SQLiteStorage(self.path)
        return RedisStorage(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=self.prefix)

    async def raw(self) -> object:
        """Everything stored, as the backend holds it (rows or keys)."""
        if self.name == "sqlite":
            return sqlite_rows(self.path)
        return await redis_keys(self.client, self.prefix)
