"""The Redis event log serves a worker's own appends locally, and never hides another's."""

from __future__ import annotations

import asyncio

from svc_helpers import REDIS_URL, drop_redis_prefix, redis_or_skip, unique

from tether.app.storage import LogItem, LogKey, RedisEventLog

KEY = LogKey("alice", "s1")


def _items(*names: str) -> list[LogItem]:
    return [LogItem("r1", "text_block_delta", f'{{"n": "{n}"}}') for n in names]


async def _scenario(prefix: str) -> None:
    async with (
        RedisEventLog(REDIS_URL, key_prefix=prefix) as here,
        RedisEventLog(REDIS_URL, key_prefix=prefix) as there,
        RedisEventLog(REDIS_URL, key_prefix=prefix) as reader,
    ):
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
        asyncio.run(_scenario(prefix))
    finally:
        drop_redis_prefix(prefix)
