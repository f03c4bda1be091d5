"""A follower caught up with a run's end marker follows the next run that holds the lease.

`POST .../interrupt` on a paused reply starts a run and answers once that run's first
event is queued, before it is committed: a client that then follows `/events` from the
pause reads only the paused run's end marker. It must wait for the new run's events,
not end the stream empty (the loaded CI failure of `test_interrupt_a_paused_reply`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterator
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


def _items(reply: str, *names: str) -> list[LogItem]:
    return [LogItem(reply, "text_block_delta", f'{{"n": "{n}"}}') for n in names]


@pytest.fixture(params=["sqlite", "redis", "postgres"])
def make_log(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Callable[[], Any]]:
    if request.param == "sqlite":
        yield lambda: SQLiteEventLog(tmp_path / "events.db")
    elif request.param == "redis":
        redis_or_skip()
        prefix = unique("tfollow")
        yield lambda: RedisEventLog(REDIS_URL, key_prefix=prefix)
        drop_redis_prefix(prefix)
    else:
        require_postgres()
        schema = unique_schema()
        yield lambda: PostgresEventLog(POSTGRES_DSN, schema=schema)
        drop_schema(schema)


async def _scenario(writer: EventLogBase, reader: EventLogBase) -> None:
    first = await writer.acquire(KEY, 5.0)
    await writer.append(first, _items("r1", "pause"))
    await writer.release(first)  # entries 1 (the pause) and 2 (the end marker)
    second = await writer.acquire(KEY, 5.0)  # the interrupt's run: nothing logged yet

    waiting = asyncio.Event()
    wait = reader.wait

    async def noted_wait(key: LogKey, after: int, seconds: float) -> bool:
        waiting.set()
        return await wait(key, after, seconds)

    reader.wait = noted_wait  # type: ignore[method-assign]

    async def collect() -> list[str]:
        return [e.data async for batch in follow(reader, KEY, 1) for e in batch]

    task = asyncio.create_task(collect())
    noted = asyncio.create_task(waiting.wait())
    await asyncio.wait([task, noted], timeout=30.0, return_when=asyncio.FIRST_COMPLETED)
    noted.cancel()
    assert not task.done(), f"the follower ended before the next run logged: {task.result()}"
    await writer.append(second, _items("r2", "interrupted"))
    await writer.release(second, _items("r2", "end"))
    assert await asyncio.wait_for(task, 30.0) == ['{"n": "interrupted"}', '{"n": "end"}']


@pytest.mark.parametrize("place", ["same worker", "another worker"])
def test_a_follower_after_an_end_marker_waits_for_the_run_holding_the_lease(
    make_log: Callable[[], EventLogBase], place: str
) -> None:
    async def main() -> None:
        writer = make_log()
        reader = writer if place == "same worker" else make_log()
        async with writer:
            if reader is writer:
                await _scenario(writer, reader)
            else:
                async with reader:
                    await _scenario(writer, reader)

    asyncio.run(main())
