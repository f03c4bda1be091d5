"""A backend that provides only `EventLogBase`'s abstract methods passes the conformance suite.

`MemoryLog` keeps every session in a dict shared by its "workers" (one process): what a
backend must write is eleven methods; `open`, `close`, `wait`, `ping` and `holds` come
from the base.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field

import pytest

from tether.app.storage import ActiveRun, EventLogBase, Lease, LogEntry, LogItem, LogKey
from tether.app.storage._events import busy
from tether.errors import LeaseLostError
from tether.testing.event_log_conformance import EventLogConformance, EventLogFactory


@dataclass
class _Head:
    agent: str | None = None
    entries: list[LogEntry] = field(default_factory=list)
    last: int = 0
    token: int = 0
    held: bool = False
    expires: float = 0.0
    reply_id: str = ""
    interrupt: bool = False

    def live(self) -> bool:
        return self.held and self.expires > time.monotonic()


class MemoryLog(EventLogBase):
    """Sessions in a shared dict; every method is one step (no await inside)."""

    def __init__(self, heads: dict[LogKey, _Head]) -> None:
        self.heads = heads

    def _head(self, key: LogKey) -> _Head:
        return self.heads.setdefault(key, _Head())

    async def bind(self, key: LogKey, agent_id: str) -> str:
        head = self._head(key)
        head.agent = head.agent or agent_id
        return head.agent

    async def agent_of(self, key: LogKey) -> str | None:
        return self._head(key).agent

    async def acquire(self, key: LogKey, ttl: float) -> Lease:
        head = self._head(key)
        if head.live():
            raise busy(head.reply_id)
        head.token += 1
        head.held, head.expires, head.reply_id, head.interrupt = (
            True,
            time.monotonic() + ttl,
            "",
            False,
        )
        return Lease(key, head.token, head.last)

    def _write(self, lease: Lease, items: Sequence[LogItem]) -> _Head:
        head = self._head(lease.key)
        if head.token != lease.token or not head.held:
            raise LeaseLostError("the lease was taken over; nothing was written")
        for item in items:
            head.last += 1
            head.entries.append(LogEntry(head.last, item.type, item.data))
            head.reply_id = item.reply_id or head.reply_id
        return head

    async def renew(self, lease: Lease, ttl: float, items: Sequence[LogItem] = ()) -> bool:
        head = self._write(lease, items)
        head.expires = time.monotonic() + ttl
        return head.interrupt

    async def append(self, lease: Lease, items: Sequence[LogItem]) -> int:
        return self._write(lease, items).last

    async def release(
        self, lease: Lease, items: Sequence[LogItem] = (), *, mark_end: bool = True
    ) -> None:
        end = [LogItem("", "", str(lease.token))] if mark_end else []
        try:
            head = self._write(lease, [*items, *end])
        except LeaseLostError:
            return
        head.held, head.interrupt = False, False

    async def active(self, key: LogKey) -> ActiveRun | None:
        head = self._head(key)
        return ActiveRun(head.token, head.reply_id, head.interrupt) if head.live() else None

    async def request_interrupt(self, key: LogKey) -> ActiveRun | None:
        head = self._head(key)
        if not head.live():
            return None
        head.interrupt = True
        return ActiveRun(head.token, head.reply_id, True)

    async def read(self, key: LogKey, after: int, limit: int = 500) -> list[LogEntry]:
        return [e for e in self._head(key).entries if e.seq > after][:limit]

    async def last_seq(self, key: LogKey) -> int:
        return self._head(key).last

    async def delete(self, key: LogKey) -> None:
        head = self._head(key)
        head.entries, head.agent, head.held, head.reply_id = [], None, False, ""


class TestMinimalEventLog(EventLogConformance):
    @pytest.fixture
    def event_log_factory(self) -> EventLogFactory:
        heads: dict[LogKey, _Head] = {}
        return lambda: MemoryLog(heads)

    async def test_holds_is_derived_as_false(self) -> None:
        assert not MemoryLog({}).holds(LogKey("u", "s"))
