"""The tests every event log must pass; subclass `EventLogConformance` to run them.

```python
import pytest
from tether.testing.event_log_conformance import EventLogConformance

class TestMyEventLog(EventLogConformance):
    @pytest.fixture
    def event_log_factory(self, tmp_path):
        # Each call returns a new, unopened log over the SAME data (another worker);
        # the suite opens and closes what it creates.
        return lambda: MyEventLog(tmp_path / "events")
```

The suite checks the contract `tether serve` relies on (see `EventLogBase`): entries
numbered 1, 2, 3 ... per session with no gap and no repeat, one lease holder at a time
with growing fencing tokens, a writer whose lease was taken over writes nothing, the end
marker written in the same step as the release, interrupts seen at the next renewal,
waits woken by another worker's append. Needs `pytest` and `pytest-asyncio`.
"""

# ruff: noqa: D102  # test methods are named for the behaviour they check

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack

import pytest
import pytest_asyncio

from tether.app.storage import EventLogBase, Lease, LogItem, LogKey
from tether.errors import LeaseLostError, ReplyInProgressError

__all__ = ["EventLogConformance", "EventLogFactory"]

KEY = LogKey("user-1", "session-1")
EventLogFactory = Callable[[], EventLogBase]
OpenLog = Callable[[], Awaitable[EventLogBase]]
"""The `logs` fixture: opens one more log over the same data."""

_SHORT = 0.05  # seconds: a lease meant to expire, a wait meant to time out
_PATIENCE = 10.0  # seconds a test waits for what must happen


def items(*names: str, reply: str = "r1") -> list[LogItem]:
    """Events to append, their JSON naming them."""
    return [LogItem(reply, "text_block_delta", f'{{"n": "{n}"}}') for n in names]


async def _take_over(log: EventLogBase, key: LogKey) -> Lease:
    """Acquire the session once the current holder's (short) lease expired."""
    async with asyncio.timeout(_PATIENCE):
        while True:
            try:
                return await log.acquire(key, 30.0)
            except ReplyInProgressError:
                await log.wait(key, 1 << 62, _SHORT)  # a bounded pause, then try again


class EventLogConformance:
    """Behaviour every `EventLogBase` must show; subclasses provide `event_log_factory`."""

    pytestmark = pytest.mark.asyncio

    @pytest.fixture
    def event_log_factory(self) -> EventLogFactory:
        """Override: return a callable making new logs over one shared backing store."""
        raise NotImplementedError("define an `event_log_factory` fixture in your test class")

    @pytest_asyncio.fixture
    async def logs(self, event_log_factory: EventLogFactory) -> AsyncIterator[OpenLog]:
        """A function opening another log over the same data (closed at teardown)."""
        async with AsyncExitStack() as stack:

            async def open_one() -> EventLogBase:
                return await stack.enter_async_context(event_log_factory())

            yield open_one

    @pytest_asyncio.fixture
    async def log(self, logs: OpenLog) -> EventLogBase:
        """One open log."""
        opened: EventLogBase = await logs()
        return opened

    async def test_a_binding_is_kept_once_made(self, log: EventLogBase) -> None:
        assert await log.agent_of(KEY) is None
        assert await log.bind(KEY, "agent-a") == "agent-a"
        assert await log.bind(KEY, "agent-b") == "agent-a"
        assert await log.agent_of(KEY) == "agent-a"

    async def test_entries_are_numbered_from_one_without_gaps(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        other = await logs()
        assert await log.read(KEY, 0) == [] and await log.last_seq(KEY) == 0
        lease = await log.acquire(KEY, 30.0)
        assert lease.start_seq == 0
        assert await log.append(lease, items("a", "b")) == 2
        assert await log.append(lease, items("c")) == 3
        assert not await log.renew(lease, 30.0, items("d"))
        for reader in (log, other):
            entries = await reader.read(KEY, 0)
            assert [e.seq for e in entries] == [1, 2, 3, 4]
            assert [e.data for e in entries] == [i.data for i in items(*"abcd")]
            assert [e.seq for e in await reader.read(KEY, 1, limit=2)] == [2, 3]
            assert await reader.read(KEY, 4) == [] and await reader.last_seq(KEY) == 4
        await log.release(lease)

    async def test_one_holder_at_a_time_with_growing_tokens(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        other = await logs()
        first = await log.acquire(KEY, 30.0)
        await log.append(first, items("a", reply="reply-1"))
        with pytest.raises(ReplyInProgressError) as busy:
            await other.acquire(KEY, 30.0)
        assert busy.value.reply_id == "reply-1"
        assert not other.holds(KEY)  # (`holds` may say False anywhere: it saves a look)
        await log.release(first)
        assert not log.holds(KEY)
        second = await other.acquire(KEY, 30.0)
        assert second.token > first.token and second.start_seq == 2  # after the end marker
        await other.release(second)

    async def test_racing_workers_get_the_lease_once(self, logs: OpenLog) -> None:
        workers = [await logs() for _ in range(4)]
        got = await asyncio.gather(*(w.acquire(KEY, 30.0) for w in workers), return_exceptions=True)
        leases = [g for g in got if isinstance(g, Lease)]
        assert len(leases) == 1, got
        assert all(isinstance(g, ReplyInProgressError) for g in got if g is not leases[0])

    async def test_release_logs_the_end_marker_in_the_same_step(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        other = await logs()
        lease = await log.acquire(KEY, 30.0)
        await log.append(lease, items("a"))
        await log.release(lease, items("final"))
        entries = await other.read(KEY, 0)
        assert [e.seq for e in entries] == [1, 2, 3]
        assert not entries[1].is_end and entries[2].is_end
        assert entries[2].data == str(lease.token)
        assert await other.active(KEY) is None
        again = await other.acquire(KEY, 30.0)
        await other.release(again, mark_end=False)  # a run that logged nothing
        assert await other.last_seq(KEY) == 3

    async def test_a_taken_over_lease_writes_nothing(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        other = await logs()
        stale = await log.acquire(KEY, _SHORT)
        await log.append(stale, items("a"))
        fresh = await _take_over(other, KEY)
        assert fresh.token > stale.token
        with pytest.raises(LeaseLostError):
            await log.append(stale, items("late"))
        with pytest.raises(LeaseLostError):
            await log.renew(stale, 30.0, items("late"))
        await log.release(stale, items("late"))  # a no-op for a lease taken over
        assert [e.data for e in await other.read(KEY, 0)] == [items("a")[0].data]
        active = await other.active(KEY)
        assert active is not None and active.token == fresh.token
        await other.release(fresh)

    async def test_an_interrupt_is_seen_at_the_next_renewal(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        other = await logs()
        assert await other.request_interrupt(KEY) is None  # nothing runs
        lease = await log.acquire(KEY, 30.0)
        await log.append(lease, items("a", reply="reply-1"))
        assert not await log.renew(lease, 30.0)
        asked = await other.request_interrupt(KEY)
        assert asked is not None and asked.token == lease.token and asked.interrupt
        assert asked.reply_id == "reply-1"
        active = await log.active(KEY)
        assert active is not None and active.interrupt
        assert await log.renew(lease, 30.0)
        await log.release(lease)
        nxt = await log.acquire(KEY, 30.0)  # a new run starts without the flag
        assert not await log.renew(nxt, 30.0)
        await log.release(nxt)

    async def test_a_wait_wakes_on_another_workers_append(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        writer = await logs()
        assert not await log.wait(KEY, 0, _SHORT)  # nothing comes: times out
        lease = await writer.acquire(KEY, 30.0)
        waiting = asyncio.create_task(log.wait(KEY, 0, _PATIENCE))
        await writer.append(lease, items("a"))
        assert await waiting
        assert await log.wait(KEY, 0, _SHORT)  # an entry is there already
        await writer.release(lease)

    async def test_delete_drops_log_lease_and_binding_but_not_the_counters(
        self, log: EventLogBase, logs: OpenLog
    ) -> None:
        other = await logs()
        await log.bind(KEY, "agent-a")
        lease = await log.acquire(KEY, 30.0)
        await log.release(lease, items("a"))
        await other.delete(KEY)
        assert await log.read(KEY, 0) == [] and await log.agent_of(KEY) is None
        assert await log.active(KEY) is None
        again = await log.acquire(KEY, 30.0)
        assert again.token > lease.token  # a stale worker's token never fits again
        await log.release(again)

    async def test_sessions_do_not_share_entries_or_leases(self, log: EventLogBase) -> None:
        keys = [LogKey("a", "b:c"), LogKey("a:b", "c"), LogKey("a", "b"), LogKey("b", "a")]
        leases = [await log.acquire(k, 30.0) for k in keys]
        for i, lease in enumerate(leases):
            await log.append(lease, items(*[str(i)] * (i + 1)))
        for i, key in enumerate(keys):
            assert [e.data for e in await log.read(key, 0)] == [items(str(i))[0].data] * (i + 1)
        for lease in leases:
            await log.release(lease)

    async def test_ping_answers_when_open(self, log: EventLogBase) -> None:
        await log.ping()
