"""Fixtures: the service on a real port, over SQLite, Redis and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from svc_agents import make_agent
from svc_helpers import REDIS_URL, ThreadServer, drop_redis_prefix, redis_or_skip, unique

from pg_helpers import POSTGRES_DSN
from tether.app.server import create_app
from tether.app.storage import (
    EventLogBase,
    PostgresEventLog,
    PostgresStorage,
    RedisEventLog,
    RedisStorage,
    SQLiteEventLog,
    SQLiteStorage,
    StorageBase,
)

KEYS = {"key-alice-0123456789": "alice", "key-bob-9876543210": "bob"}


@dataclass
class Backend:
    name: str
    make: Any  # () -> (storage, events), fresh objects on the same data

    def pair(self) -> tuple[StorageBase, EventLogBase]:
        storage, events = self.make()
        return storage, events


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    if request.param == "sqlite":
        db = tmp_path / "sessions.db"
        yield Backend("sqlite", lambda: (SQLiteStorage(db), SQLiteEventLog(tmp_path / "events.db")))
        return
    if request.param == "postgres":
        schema = request.getfixturevalue("pg_schema")
        yield Backend(
            "postgres",
            lambda: (
                PostgresStorage(POSTGRES_DSN, schema=schema),
                PostgresEventLog(POSTGRES_DSN, schema=schema),
            ),
        )
        return
    redis_or_skip()
    prefix = unique("tsvc")
    yield Backend(
        "redis",
        lambda: (
            RedisStorage(url=REDIS_URL, key_prefix=prefix),
            RedisEventLog(REDIS_URL, key_prefix=f"{prefix}:events"),
        ),
    )
    drop_redis_prefix(prefix)


@pytest.fixture
def test_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.setenv("TETHER_TEST_DIR", str(folder))
    return folder


@dataclass
class Live:
    url: str
    backend: Backend
    dir: Path

    def client(self, key: str | None = "key-alice-0123456789", **kw: Any) -> httpx.Client:
        headers = {"authorization": f"Bearer {key}"} if key else {}
        return httpx.Client(base_url=self.url, headers=headers, timeout=30, **kw)

    def runs(self) -> list[str]:
        path = self.dir / "runs.log"
        return path.read_text().splitlines() if path.exists() else []

    def open_gate(self, name: str) -> None:
        (self.dir / name).touch()


@pytest.fixture
def live(backend: Backend, test_dir: Path) -> Iterator[Live]:
    storage, events = backend.pair()
    app = create_app(
        {"planner": make_agent()}, storage, events=events, api_keys=KEYS, lease_ttl=2.0
    )
    with ThreadServer(app) as server:
        yield Live(server.url, backend, test_dir)
