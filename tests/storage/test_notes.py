"""`NotesBase` on SQLite, the real Redis and the real PostgreSQL: put, get, pop, lifetimes."""

from __future__ import annotations

import os
import stat
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT

from pg_helpers import POSTGRES_DSN, drop_schema, require_postgres, unique_schema
from tether.app.storage import NotesBase, PostgresNotes, RedisNotes, SQLiteNotes

REDIS = f"redis://{REDIS_HOST}:{REDIS_PORT}/{REDIS_DB}"


@pytest_asyncio.fixture(params=["sqlite", "redis", "postgres"])
async def notes(
    request: pytest.FixtureRequest, tmp_path: Path, redis_prefix: str
) -> AsyncIterator[NotesBase]:
    schema = None
    store: NotesBase
    if request.param == "sqlite":
        store = SQLiteNotes(tmp_path / "n.db")
    elif request.param == "redis":
        store = RedisNotes(REDIS, key_prefix=redis_prefix)
    else:
        require_postgres()
        schema = unique_schema()
        store = PostgresNotes(POSTGRES_DSN, schema=schema)
    await store.open()
    try:
        yield store
    finally:
        await store.close()
        if schema is not None:
            drop_schema(schema)


async def test_put_get_pop(notes: NotesBase) -> None:
    assert await notes.get("u1", "a") is None
    assert await notes.put("u1", "a", "one")
    assert await notes.get("u1", "a") == "one"
    assert await notes.get("u2", "a") is None  # scopes are apart
    assert await notes.put("u1", "a", "two")  # replaced
    assert await notes.get("u1", "a") == "two"
    assert await notes.pop("u1", "a") == "two"
    assert await notes.pop("u1", "a") is None
    assert await notes.get("u1", "a") is None


async def test_only_new_keeps_the_first_value(notes: NotesBase) -> None:
    assert await notes.put("s", "answer", "first", ttl=60, only_new=True)
    assert not await notes.put("s", "answer", "second", ttl=60, only_new=True)
    assert await notes.get("s", "answer") == "first"


async def test_an_expired_note_is_gone_and_can_be_put_again(notes: NotesBase) -> None:
    assert await notes.put("s", "x", "old", ttl=0.001)
    deadline = time.monotonic() + 5  # a lifetime of 1 ms: gone at one of the next looks
    while await notes.get("s", "x") is not None and time.monotonic() < deadline:
        pass
    assert await notes.get("s", "x") is None
    assert await notes.pop("s", "x") is None
    assert await notes.put("s", "x", "new", ttl=60, only_new=True)
    assert await notes.get("s", "x") == "new"


async def test_names_with_separators_do_not_collide(notes: NotesBase) -> None:
    await notes.put("a:b", "c", "1")
    await notes.put("a", "b:c", "2")
    assert (await notes.get("a:b", "c"), await notes.get("a", "b:c")) == ("1", "2")


async def test_the_sqlite_file_is_private(tmp_path: Path) -> None:
    store = SQLiteNotes(tmp_path / "n.db")
    await store.put("u", "n", "secret")
    await store.close()
    assert stat.S_IMODE(os.stat(tmp_path / "n.db").st_mode) == 0o600
