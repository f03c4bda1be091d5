"""PostgreSQL faults at the storage: cut connections, writes whose answer is lost, a full pool.

Real server, real faults: `pg_terminate_backend` on the pool's connections, and a proxy
that drops the server's answer to a write that committed (its caller cannot know it
landed). A retried write must be recognised by its write id (sessions) or its expected
sequence number (event log), never applied twice.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio

from pg_helpers import POSTGRES_DSN, CutProxy, require_postgres, terminate, with_options
from tether.app.storage import LogItem, LogKey, PostgresEventLog, PostgresStorage
from tether.errors import StorageBusyError
from tether.message import UserMsg

pytestmark = pytest.mark.postgres

U, A, S = "user-1", "agent-1", "session-1"
KEY = LogKey(U, S)


@pytest_asyncio.fixture
async def proxy() -> AsyncIterator[tuple[CutProxy, str]]:
    require_postgres()
    cut = CutProxy()
    dsn = await cut.start()
    try:
        yield cut, dsn
    finally:
        await cut.stop()


def _items(*names: str) -> list[LogItem]:
    return [LogItem("r1", "text_block_delta", f'{{"n": "{n}"}}') for n in names]


async def test_every_call_survives_its_connections_being_terminated(pg_schema: str) -> None:
    app = f"tether_cut_{secrets.token_hex(4)}"
    dsn = with_options(POSTGRES_DSN, application_name=app)
    async with (
        PostgresStorage(dsn, schema=pg_schema) as storage,
        PostgresEventLog(dsn, schema=pg_schema) as events,
    ):
        state = (await storage.upsert_session(U, A, S)).state
        lease = await events.acquire(KEY, 30.0)
        killed = []
        for i in range(5):
            killed.append(await asyncio.to_thread(terminate, app))
            state.add_message(UserMsg("user", f"message {i}"))
            assert await storage.update_session_state(U, A, S, state) == i + 2
            killed.append(await asyncio.to_thread(terminate, app))
            assert await events.append(lease, _items(str(i))) == i + 1
            killed.append(await asyncio.to_thread(terminate, app))
            loaded = await storage.get_session(U, A, S)
            assert loaded is not None and loaded.state == state
        await events.release(lease)
        assert all(n >= 1 for n in killed), killed
        entries = await events.read(KEY, 0)
        assert [e.seq for e in entries] == [1, 2, 3, 4, 5, 6]
        assert [e.data for e in entries[:-1]] == [it.data for it in _items(*"01234")]


async def test_a_save_whose_answer_was_lost_is_not_applied_twice(
    pg_schema: str, proxy: tuple[CutProxy, str]
) -> None:
    cut, dsn = proxy
    async with (
        PostgresStorage(dsn, schema=pg_schema, pool_size=1) as storage,
        PostgresStorage(POSTGRES_DSN, schema=pg_schema) as reader,
    ):
        state = (await storage.upsert_session(U, A, S)).state
        for i in range(3):
            state.add_message(UserMsg("user", f"message {i}"))
            cut.cut_next_answer()  # the save commits; its answer never arrives
            assert await storage.update_session_state(U, A, S, state) == i + 2
        assert cut.cuts == 3
        loaded = await reader.get_session(U, A, S)
        assert loaded is not None and loaded.version == 4 and loaded.state == state
        state.add_message(UserMsg("user", "after"))  # the version it remembered is right
        assert await storage.update_session_state(U, A, S, state) == 5


async def test_an_append_whose_answer_was_lost_is_logged_once(
    pg_schema: str, proxy: tuple[CutProxy, str]
) -> None:
    cut, dsn = proxy
    async with (
        PostgresEventLog(dsn, schema=pg_schema, pool_size=1) as events,
        PostgresEventLog(POSTGRES_DSN, schema=pg_schema) as reader,
    ):
        lease = await events.acquire(KEY, 30.0)
        cut.cut_next_answer()
        assert await events.append(lease, _items("a", "b")) == 2
        cut.cut_next_answer()
        assert not await events.renew(lease, 30.0, _items("c"))
        cut.cut_next_answer()
        await events.release(lease, _items("d"))
        assert cut.cuts == 3
        entries = await reader.read(KEY, 0)
        assert [e.seq for e in entries] == [1, 2, 3, 4, 5]
        assert [e.data for e in entries[:4]] == [it.data for it in _items(*"abcd")]
        assert entries[4].is_end and await reader.active(KEY) is None


async def test_a_full_pool_waits_then_raises_storage_busy(pg_schema: str) -> None:
    async with PostgresStorage(
        POSTGRES_DSN, schema=pg_schema, pool_size=1, pool_timeout=0.3
    ) as storage:
        await storage.upsert_session(U, A, S)
        held, release = asyncio.Event(), asyncio.Event()

        async def hold(conn: object) -> None:
            held.set()
            await release.wait()

        holder = asyncio.create_task(storage._pool.run(hold))
        await held.wait()
        with pytest.raises(StorageBusyError, match=r"all 1 connections .* raise `pool_size`"):
            await storage.get_session(U, A, S)
        release.set()
        await holder
        assert await storage.get_session(U, A, S) is not None  # free again: it answers
