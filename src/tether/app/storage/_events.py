"""`EventLogBase`: each session's durable event log and its one-reply-at-a-time lease.

The HTTP service numbers every event of a session (1, 2, 3, ...) and appends it here
*before* anyone is sent it; a client that reconnects reads the log after its last
number, then waits on the same log for more, so no event can fall between the replay and
the live follow. A reply runs under a lease: at most one holder per session, with an
expiry (a worker that dies loses it) and a fencing token that grows with every new
holder; every append checks the token in the same atomic step as the write, so a worker
whose lease was taken over cannot write another event.

The log also remembers which agent a session id belongs to (the HTTP API names sessions
by user and session id only).
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from tether.errors import ReplyInProgressError

__all__ = [
    "ActiveRun",
    "EventLogBase",
    "Lease",
    "LogEntry",
    "LogItem",
    "LogKey",
    "RecentEntries",
    "busy",
]


_POLL_FIRST, _POLL_MAX = 0.01, 0.25  # seconds between looks of the default `wait`


@dataclass(frozen=True, slots=True)
class LogKey:
    """A session as the log names it: its user and its session id."""

    user_id: str
    session_id: str


@dataclass(frozen=True, slots=True)
class Lease:
    """The right to run the session's reply, until it expires or is taken over."""

    key: LogKey
    token: int
    """Fencing token: strictly larger than every earlier holder's."""
    start_seq: int
    """The last sequence number in the log when the lease was taken."""


@dataclass(frozen=True, slots=True)
class ActiveRun:
    """The run holding a session's lease right now."""

    token: int
    reply_id: str
    """The id of the reply it runs ("" until its first event is logged)."""
    interrupt: bool
    """Someone asked it to stop."""


@dataclass(frozen=True, slots=True)
class LogItem:
    """An event to append: its reply, type and JSON."""

    reply_id: str
    type: str
    data: str


@dataclass(frozen=True, slots=True)
class LogEntry:
    """One entry of the log: an event (its type and JSON) or the end of a run."""

    seq: int
    type: str
    """The event's type; "" for the marker that ends a run."""
    data: str
    """The event's JSON (for an end marker: the run's fencing token)."""

    @property
    def is_end(self) -> bool:
        """Whether this entry marks the end of a run (never sent to clients)."""
        return self.type == ""


class RecentEntries:
    """The entries a process appended per session under its lease, for local reads.

    While a process holds a session's lease it is the log's only writer, so what it
    appended since it took the lease is the log's tail: a read after a number in that
    range needs no round trip to the backend, not even the first one, which finds nothing
    yet (`start`). Kept contiguous, for the most recent `sessions` sessions, `entries` per
    session at most.
    """

    def __init__(self, sessions: int = 1024, entries: int = 4096) -> None:
        self._by_key: OrderedDict[LogKey, tuple[int, list[LogEntry]]] = OrderedDict()
        """Per session: the number before the first kept entry, and the kept entries."""
        self._sessions = sessions
        self._entries = entries

    def start(self, key: LogKey, last: int) -> None:
        """A lease was just taken on a log whose last number is `last`: nothing above it."""
        self._keep(key, last, [])

    def remember(self, key: LogKey, last: int, items: Sequence[LogItem]) -> None:
        """Keep the entries just appended (numbered up to `last`)."""
        if not items:
            return
        first = last - len(items) + 1
        entries = [LogEntry(first + i, it.type, it.data) for i, it in enumerate(items)]
        kept = self._by_key.get(key)
        if (
            kept is not None
            and kept[0] + len(kept[1]) + 1 == first
            and len(kept[1]) + len(entries) <= self._entries
        ):
            kept[1].extend(entries)
            self._by_key.move_to_end(key)
        else:
            self._keep(key, first - 1, entries)

    def _keep(self, key: LogKey, base: int, entries: list[LogEntry]) -> None:
        self._by_key[key] = (base, entries)
        self._by_key.move_to_end(key)
        while len(self._by_key) > self._sessions:
            self._by_key.popitem(last=False)

    def read(self, key: LogKey, after: int, limit: int) -> list[LogEntry] | None:
        """The kept entries above `after` (at most `limit`); None if they are not all here."""
        kept = self._by_key.get(key)
        if kept is None:
            return None
        base, entries = kept
        if not base <= after <= base + len(entries):
            return None
        start = after - base
        return entries[start : start + limit]

    def forget(self, key: LogKey) -> None:
        """Drop the session's entries."""
        self._by_key.pop(key, None)


_PING = LogKey("tether", "ping")  # a session no one uses: `ping` reads its number


def busy(reply_id: str) -> ReplyInProgressError:
    """The error for a session whose lease another run holds."""
    shown = reply_id or "(starting)"
    return ReplyInProgressError(
        f"the session is running reply {shown}; wait for it to end (follow "
        "`GET /v1/sessions/{id}/events`), or start yours with `?if_busy=interrupt`",
        reply_id=reply_id,
    )


class EventLogBase(ABC):
    """Event logs and leases of sessions; SQLite, Redis and PostgreSQL implement it.

    A backend provides the eleven abstract methods: the binding (`bind`, `agent_of`),
    the lease and its checked writes (`acquire`, `renew`, `append`, `release`,
    `active`, `request_interrupt`), the log (`read`, `last_seq`) and `delete`. The
    base derives the rest: `open`/`close` do nothing, `wait` looks at `last_seq` with a
    growing pause, `ping` is one `last_seq`, `holds` says False; override them where
    the backend does better. `tether.testing.event_log_conformance` checks a backend.
    Use it as an async context manager, like a `StorageBase`.
    """

    async def __aenter__(self) -> Self:
        await self.open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def open(self) -> None:  # noqa: B027  # optional hook
        """Connect (idempotent); `StorageUnavailableError` if the backend is down."""

    async def close(self) -> None:  # noqa: B027  # optional hook
        """Release connections (idempotent)."""

    @abstractmethod
    async def bind(self, key: LogKey, agent_id: str) -> str:
        """Record that the session runs `agent_id` (kept if already bound); return the agent."""

    @abstractmethod
    async def agent_of(self, key: LogKey) -> str | None:
        """The agent the session was bound to, or None."""

    @abstractmethod
    async def acquire(self, key: LogKey, ttl: float) -> Lease:
        """Take the session's lease for `ttl` seconds.

        Raises:
            ReplyInProgressError: another run holds an unexpired lease.
        """

    @abstractmethod
    async def renew(self, lease: Lease, ttl: float, items: Sequence[LogItem] = ()) -> bool:
        """Append `items` (if any) and extend the lease; return whether to stop.

        One atomic step, like `append`; the result says whether an interrupt was asked for.

        Raises:
            LeaseLostError: another run took the lease over; nothing was written.
        """

    @abstractmethod
    async def append(self, lease: Lease, items: Sequence[LogItem]) -> int:
        """Append events under the lease, in one atomic step; return the last number.

        Raises:
            LeaseLostError: another run took the lease over; nothing was written.
        """

    @abstractmethod
    async def release(
        self, lease: Lease, items: Sequence[LogItem] = (), *, mark_end: bool = True
    ) -> None:
        """Append `items`, the end-of-run marker, and give the lease back, in one step.

        Does nothing if the lease was taken over.
        """

    @abstractmethod
    async def active(self, key: LogKey) -> ActiveRun | None:
        """The run holding an unexpired lease, if any."""

    def holds(self, key: LogKey) -> bool:
        """Whether this very log object holds the session's lease (no round trip).

        True only between its `acquire` and its `release`; a lease taken over by another
        worker may still count until this holder's next write fails.
        """
        return False

    @abstractmethod
    async def request_interrupt(self, key: LogKey) -> ActiveRun | None:
        """Ask the active run to stop; return it (None if nothing runs)."""

    @abstractmethod
    async def read(self, key: LogKey, after: int, limit: int = 500) -> list[LogEntry]:
        """Entries with a sequence number above `after`, in order (at most `limit`)."""

    @abstractmethod
    async def last_seq(self, key: LogKey) -> int:
        """The sequence number of the session's last entry (0 if none)."""

    async def wait(self, key: LogKey, after: int, seconds: float) -> bool:
        """Return True once an entry above `after` may exist; False after `seconds`.

        By default it looks at `last_seq` with a growing pause (up to `_POLL_MAX` s);
        a backend that can be woken (a signal, `LISTEN`, a blocking read) overrides it.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + seconds
        pause = _POLL_FIRST
        while await self.last_seq(key) <= after:
            left = deadline - loop.time()
            if left <= 0:
                return False
            await asyncio.sleep(min(pause, left))
            pause = min(pause * 2, _POLL_MAX)
        return True

    @abstractmethod
    async def delete(self, key: LogKey) -> None:
        """Remove the session's log, lease and binding."""

    async def ping(self) -> None:
        """Raise `StorageUnavailableError` unless the backend answers (one `last_seq`)."""
        await self.last_seq(_PING)
