"""Helpers for the storage tests: a private redis-server, key-prefix cleanup."""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import redis.asyncio as aioredis

from _ports import start_redis
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


class RedisServer:
    """A private `redis-server` with AOF persistence (fsync on every write) in a tmp dir.

    The first `start()` takes a free port (`_ports.start_redis`); later ones (a restart
    after `kill()`) bind the same port, which the clients know.
    """

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = 0  # chosen by the first start
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        args = ["--dir", str(self.directory), "--save", "", "--appendonly", "yes"]
        args += ["--appendfsync", "always", "--protected-mode", "no"]
        self.process, self.port = start_redis(args, port=self.port or None)

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
