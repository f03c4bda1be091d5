"""An event log serves a worker's own appends locally, and never hides another's."""

from __future__ import annotations

import asyncio
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from svc_helpers import REDIS_URL, drop_redis_prefix, redis_or_skip, unique

from pg_helpers import POSTGRES_DSN, drop_schema, require_postgres, unique_schema
from tether.app.server._stream import follow
from tether.app.storage import (
    EventLogBase,
    LogItem,
    LogKey,
    PostgresEventLog,
    RedisEventLog,
    SQLiteEventLog,
)

KEY = LogKey("alice", "s1")


def _items(*names: str) -> list[LogItem]:
    return [LogItem("r1", "text_block_delta", f'{{"n": "{n}"}}') for n in names]


async def _scenario(here: EventLogBase, there: EventLogBase, reader: EventLogBase) -> None:
    async with here, there, reader:
        lease = await here.acquire(KEY, 5.0)
        await here.append(lease, _items("a", "b"))
        await here.renew(lease, 5.0, _items("c"))
        mine = await here.read(KEY, 0)  # from this worker's own appends
        assert mine == await reader.read(KEY, 0)  # the same entries as Redis holds
        assert [e.seq for e in mine] == [1, 2, 3]
        assert await here.read(KEY, 1, limit=1) == mine[1:2]
        assert await here.read(KEY, 3) == []
        await here.release(lease, _items("d"))
        assert [e.seq for e in await here.read(KEY, 3)] == [4, 5]
        # Another worker runs the next reply: the first worker's reads see its entries.
        other = await there.acquire(KEY, 5.0)
        await there.release(other, _items("e"))
        after = await here.read(KEY, 5)
        assert [e.data for e in after[:1]] == ['{"n": "e"}'] and after == await reader.read(KEY, 5)
        assert await here.read(KEY, 0) == await reader.read(KEY, 0)
        await here.delete(KEY)
        assert await here.read(KEY, 0) == [] == await reader.read(KEY, 0)


def test_local_reads_equal_the_log_and_follow_other_workers() -> None:
    redis_or_skip()
    prefix = unique("tlocal")
    try:
        asyncio.run(_scenario(*(RedisEventLog(REDIS_URL, key_prefix=prefix) for _ in range(3))))
    finally:
        drop_redis_prefix(prefix)


def test_sqlite_local_reads_equal_the_file_and_follow_other_processes(tmp_path: Path) -> None:
    path = tmp_path / "events.db"  # three logs on one file: three worker processes
    asyncio.run(_scenario(*(SQLiteEventLog(path) for _ in range(3))))


def test_sqlite_reads_of_a_run_this_log_holds_need_no_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async def scenario() -> None:
        async with SQLiteEventLog(tmp_path / "events.db") as log:
            lease = await log.acquire(KEY, 5.0)
            await log.renew(lease, 5.0, _items("a", "b"))
            real = log._file.run

            async def refused(*args: Any, **kwargs: Any) -> Any:
                raise AssertionError("a read of the held run queried the file")

            monkeypatch.setattr(log._file, "run", refused)
            assert [e.data for e in await log.read(KEY, 0)] == ['{"n": "a"}', '{"n": "b"}']
            assert await log.read(KEY, 2) == []
            monkeypatch.setattr(log._file, "run", real)
            await log.release(lease)
            monkeypatch.setattr(log._file, "run", refused)
            with pytest.raises(AssertionError, match="queried the file"):
                await log.read(KEY, 0)  # released: the file is the truth again

    asyncio.run(scenario())


def test_following_a_run_this_log_holds_never_asks_for_the_lease(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tether.app.server._stream import follow

    async def scenario() -> None:
        async with SQLiteEventLog(tmp_path / "events.db") as log:
            lease = await log.acquire(KEY, 5.0)
            assert log.holds(KEY)

            async def refused(key: LogKey) -> Any:
                raise AssertionError("the follower asked for the lease of a run held here")

            monkeypatch.setattr(log, "active", refused)
            seen: list[str] = []

            async def follower() -> None:
                async for batch in follow(log, KEY, lease.start_seq, token=lease.token):
                    seen.extend(e.data for e in batch)

            task = asyncio.create_task(follower())
            await log.renew(lease, 5.0, _items("a"))
            while not seen:  # the follower caught up with "a" and now waits
                await asyncio.sleep(0)
            await log.release(lease, _items("b"))
            await task
            assert seen == ['{"n": "a"}', '{"n": "b"}'] and not log.holds(KEY)

    asyncio.run(scenario())


def test_postgres_local_reads_equal_the_table_and_follow_other_workers() -> None:
    require_postgres()
    schema = unique_schema()
    try:
        asyncio.run(_scenario(*(PostgresEventLog(POSTGRES_DSN, schema=schema) for _ in range(3))))
    finally:
        drop_schema(schema)


def test_postgres_notify_ahead_of_the_kept_entries_reads_the_table() -> None:
    """A NOTIFY can land before the append that sent it returns (its entries not kept
    here yet): a read then goes to the table, so a follower woken by it never spins."""
    require_postgres()
    schema = unique_schema()

    async def scenario() -> None:
        here = PostgresEventLog(POSTGRES_DSN, schema=schema)
        there = PostgresEventLog(POSTGRES_DSN, schema=schema)
        async with here, there:
            lease = await here.acquire(KEY, 5.0)
            await here.append(lease, _items("a"))
            assert await here.read(KEY, 1) == []  # kept here: nothing newer
            # The same run's next append, committed without `here` keeping it: as seen
            # between the NOTIFY and the return of `here`'s own statement.
            await there.append(lease, _items("b"))
            assert await here.wait(KEY, 1, 10.0)
            assert [e.data for e in await here.read(KEY, 1)] == ['{"n": "b"}']
            stream = follow(here, KEY, 1)
            assert [e.seq for e in await asyncio.wait_for(anext(stream), 10.0)] == [2]
            await stream.aclose()
            await here.release(lease)

    try:
        asyncio.run(scenario())
    finally:
        drop_schema(schema)


async def _first_read_scenario(log: EventLogBase, patch: Any) -> None:
    """A run just started: reading above its lease's start finds nothing, without a round
    trip (this process is the log's only writer now); below it, the backend answers."""
    async with log:
        first = await log.acquire(KEY, 5.0)
        await log.release(first, _items("a"))  # an earlier run: entries 1 and its end, 2
        lease = await log.acquire(KEY, 5.0)
        assert lease.start_seq == 2
        with patch():
            assert await log.read(KEY, lease.start_seq) == []
        older = await log.read(KEY, 0)  # not all kept here: the backend answers
        assert [e.seq for e in older] == [1, 2]
        await log.renew(lease, 5.0, _items("b"))
        with patch():
            assert [e.data for e in await log.read(KEY, 2)] == ['{"n": "b"}']
        await log.release(lease)
        await log.delete(KEY)


def _refusing(monkeypatch: pytest.MonkeyPatch, target: Any, name: str) -> Any:
    @contextmanager
    def patch() -> Any:
        async def refused(*args: Any, **kwargs: Any) -> Any:
            raise AssertionError("a read of the run held here went to the backend")

        with monkeypatch.context() as m:
            m.setattr(target, name, refused)
            yield

    return patch


def test_sqlite_first_read_of_a_run_needs_no_query(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = SQLiteEventLog(tmp_path / "events.db")
    asyncio.run(_first_read_scenario(log, lambda: _refusing(monkeypatch, log._file, "run")()))


def test_redis_first_read_of_a_run_needs_no_round_trip(monkeypatch: pytest.MonkeyPatch) -> None:
    redis_or_skip()
    prefix = unique("tfirst")
    log = RedisEventLog(REDIS_URL, key_prefix=prefix)

    async def scenario() -> None:
        async with log:  # (the client exists once the log is open)
            patch = _refusing(monkeypatch, log._client, "xrange")
            await _first_read_scenario(log, patch)

    try:
        asyncio.run(scenario())
    finally:
        drop_redis_prefix(prefix)


def test_postgres_first_read_of_a_run_needs_no_query(monkeypatch: pytest.MonkeyPatch) -> None:
    require_postgres()
    schema = unique_schema()
    log = PostgresEventLog(POSTGRES_DSN, schema=schema)
    try:
        asyncio.run(_first_read_scenario(log, lambda: _refusing(monkeypatch, log, "_run")()))
    finally:
        drop_schema(schema)
