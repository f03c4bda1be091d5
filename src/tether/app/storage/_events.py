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

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import TracebackType
from typing import Self

from tether.errors import ReplyInProgressError

__all__ = ["ActiveRun", "EventLogBase", "Lease", "LogEntry", "LogItem", "LogKey", "busy"]


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


def busy(reply_id: str) -> ReplyInProgressError:
    """The error for a session whose lease another run holds."""
    shown = reply_id or "(starting)"
    return ReplyInProgressError(
        f"the session is running reply {shown}; wait for it to end (follow "
        "`GET /v1/sessions/{id}/events`), or start yours with `?if_busy=interrupt`",
        reply_id=reply_id,
    )


class EventLogBase(ABC):
    """Event logs and leases of sessions; SQLite and Redis implement it.

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

    @abstractmethod
    async def open(self) -> None:
        """Connect (idempotent); `StorageUnavailableError` if the backend is down."""

    @abstractmethod
    async def close(self) -> None:
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

    @abstractmethod
    async def request_interrupt(self, key: LogKey) -> ActiveRun | None:
        """Ask the active run to stop; return it (None if nothing runs)."""

    @abstractmethod
    async def read(self, key: LogKey, after: int, limit: int = 500) -> list[LogEntry]:
        """Entries with a sequence number above `after`, in order (at most `limit`)."""

    @abstractmethod
    async def last_seq(self, key: LogKey) -> int:
        """The sequence number of the session's last entry (0 if none)."""

    @abstractmethod
    async def wait(self, key: LogKey, after: int, seconds: float) -> bool:
        """Return True once an entry above `after` may exist; False after `seconds`."""

    @abstractmethod
    async def delete(self, key: LogKey) -> None:
        """Remove the session's log, lease and binding."""

    @abstractmethod
    async def ping(self) -> None:
        """Raise `StorageUnavailableError` unless the backend answers."""
