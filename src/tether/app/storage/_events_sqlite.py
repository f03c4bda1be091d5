"""`SQLiteEventLog`: event logs and leases in tables next to the sessions (`sqlite3`).

Every call is one transaction, so the token check and the write of an append are one
atomic step, also against other processes on the same file. Calls run on the event
loop's thread: a WAL read never waits for a writer, and a write of a few rows (no fsync
with `synchronous=NORMAL`) costs less than handing it to a thread and back. Only a write
that finds the file locked by another process goes to the log's own thread, to wait
there (`busy_timeout`); WAL checkpoints run on that thread too, never on the loop.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import TypeVar

from tether.app.storage._events import (
    ActiveRun,
    EventLogBase,
    Lease,
    LogEntry,
    LogItem,
    LogKey,
    RecentEntries,
    busy,
)
from tether.app.storage._sqlite_file import SQLiteFile
from tether.errors import LeaseLostError, StorageUnavailableError

__all__ = ["SQLiteEventLog"]

_T = TypeVar("_T")
_POLL = 0.25  # seconds between looks at the file for writers in other processes

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tether_event_heads (
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    agent_id TEXT,
    last_seq INTEGER NOT NULL DEFAULT 0,
    token INTEGER NOT NULL DEFAULT 0,
    holder INTEGER NOT NULL DEFAULT 0,
    reply_id TEXT NOT NULL DEFAULT '',
    expires REAL NOT NULL DEFAULT 0,
    interrupt INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (user_id, session_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tether_events (
    user_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    type TEXT NOT NULL,
    data TEXT NOT NULL,
    PRIMARY KEY (user_id, session_id, seq)
) WITHOUT ROWID;
"""
_HEAD = "user_id = ? AND session_id = ?"


class SQLiteEventLog(EventLogBase):
    """Event logs in a SQLite file (the sessions' file by default: `SQLiteStorage.path`)."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> None:
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self._file = SQLiteFile(self.path, busy_timeout, "tether-events", self._unavailable)
        self._signals: dict[LogKey, asyncio.Event] = {}
        self._last: dict[LogKey, int] = {}  # last seq this process wrote, per session
        self._held: dict[LogKey, int] = {}  # leases this process holds: key -> token
        # What this process appended under the leases it holds: while it holds one it is
        # the session log's only writer, so reads of its own run need no query.
        self._recent = RecentEntries()

    def __repr__(self) -> str:
        return f"SQLiteEventLog({self.path!r})"

    async def open(self) -> None:
        """Open the file and create the tables (idempotent)."""
        if not self._file.is_open:
            await self._file.open(_set_up)

    async def close(self) -> None:
        """Close the file (idempotent)."""
        await self._file.close()

    def _unavailable(self, exc: BaseException) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"the SQLite event log at {self.path!r} cannot be used ({exc}); check that the "
            "file is writable and not locked by another process"
        )

    async def _call(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool = True) -> _T:
        """Run `fn` in one transaction (see `SQLiteFile.run`), opening the file if needed."""
        if not self._file.is_open:
            await self.open()
        return await self._file.run(fn, write=write)

    def _signal(self, key: LogKey, seq: int | None = None) -> None:
        if seq is None:
            self._last.pop(key, None)
        else:
            self._last[key] = seq
        event = self._signals.pop(key, None)
        if event is not None:
            event.set()

    async def bind(self, key: LogKey, agent_id: str) -> str:
        """Record the session's agent (an existing binding wins); return the agent."""

        def run(db: sqlite3.Connection) -> str:
            db.execute(
                "INSERT INTO tether_event_heads (user_id, session_id, agent_id) VALUES (?, ?, ?)"
                " ON CONFLICT DO UPDATE SET agent_id = coalesce(agent_id, excluded.agent_id)",
                (key.user_id, key.session_id, agent_id),
            )
            row = db.execute(
                f"SELECT agent_id FROM tether_event_heads WHERE {_HEAD}", _ids(key)
            ).fetchone()
            return str(row[0])

        return await self._call(run)

    async def agent_of(self, key: LogKey) -> str | None:
        """The session's agent, if bound."""
        row = await self._call(partial(_head, key=key, cols="agent_id"), write=False)
        return None if row is None or row[0] is None else str(row[0])

    async def acquire(self, key: LogKey, ttl: float) -> Lease:
        """Take the lease, or raise `ReplyInProgressError` naming the running reply."""

        def run(db: sqlite3.Connection) -> Lease | str:
            db.execute(
                "INSERT OR IGNORE INTO tether_event_heads (user_id, session_id) VALUES (?, ?)",
                _ids(key),
            )
            row = db.execute(
                f"SELECT last_seq, token, holder, reply_id, expires FROM tether_event_heads"
                f" WHERE {_HEAD}",
                _ids(key),
            ).fetchone()
            last_seq, token, holder, reply_id, expires = row
            now = time.time()
            if holder and expires > now:
                return str(reply_id)
            db.execute(
                "UPDATE tether_event_heads SET token = ?, holder = 1, reply_id = '', expires = ?,"
                f" interrupt = 0 WHERE {_HEAD}",
                (token + 1, now + ttl, *_ids(key)),
            )
            return Lease(key=key, token=token + 1, start_seq=int(last_seq))

        got = await self._call(run)
        if isinstance(got, str):
            raise busy(got)
        self._held[key] = got.token
        self._recent.start(key, got.start_seq)
        return got

    def _check(self, db: sqlite3.Connection, lease: Lease) -> tuple[int, int]:
        row = db.execute(
            f"SELECT token, holder, last_seq, interrupt FROM tether_event_heads WHERE {_HEAD}",
            _ids(lease.key),
        ).fetchone()
        if row is None or row[0] != lease.token or not row[1]:
            raise _lost(lease)
        return int(row[2]), int(row[3])

    async def renew(self, lease: Lease, ttl: float, items: Sequence[LogItem] = ()) -> bool:
        """Append `items`, extend the lease; whether an interrupt was asked for."""
        reply_id = items[-1].reply_id if items else None

        def run(db: sqlite3.Connection) -> tuple[bool, int]:
            # The check, the expiry, the new last number and the reply in one statement.
            row = db.execute(
                "UPDATE tether_event_heads SET expires = ?, last_seq = last_seq + ?,"
                f" reply_id = coalesce(?, reply_id) WHERE {_HEAD} AND token = ? AND holder = 1"
                " RETURNING last_seq, interrupt",
                (time.time() + ttl, len(items), reply_id, *_ids(lease.key), lease.token),
            ).fetchone()
            if row is None:
                raise _lost(lease)
            seq = int(row[0])
            if items:
                _insert(db, lease.key, seq - len(items), items)
            return bool(row[1]), seq

        interrupt, seq = await self._call(run)
        if items:
            self._recent.remember(lease.key, seq, items)
            self._signal(lease.key, seq)
        return interrupt

    async def append(self, lease: Lease, items: Sequence[LogItem]) -> int:
        """Append events if the lease is still ours; the last sequence number."""

        def run(db: sqlite3.Connection) -> int:
            last, _ = self._check(db, lease)
            return self._write(db, lease, last, items)

        seq = await self._call(run)
        self._recent.remember(lease.key, seq, items)
        self._signal(lease.key, seq)
        return seq

    def _write(
        self, db: sqlite3.Connection, lease: Lease, last: int, items: Sequence[LogItem]
    ) -> int:
        _insert(db, lease.key, last, items)
        seq = last + len(items)
        if items:
            db.execute(
                f"UPDATE tether_event_heads SET last_seq = ?, reply_id = ? WHERE {_HEAD}",
                (seq, items[-1].reply_id, *_ids(lease.key)),
            )
        return seq

    async def release(
        self, lease: Lease, items: Sequence[LogItem] = (), *, mark_end: bool = True
    ) -> None:
        """Log `items` and the end marker, give the lease back (no-op if taken over)."""
        end = [LogItem("", "", str(lease.token))] if mark_end else []
        logged = [*items, *end]

        def run(db: sqlite3.Connection) -> int | None:
            try:
                last, _ = self._check(db, lease)
            except LeaseLostError:
                return None
            last = self._write(db, lease, last, logged)
            db.execute(
                "UPDATE tether_event_heads SET holder = 0, expires = 0, interrupt = 0"
                f" WHERE {_HEAD}",
                _ids(lease.key),
            )
            return last

        try:
            last = await self._call(run)
            if last is not None:
                self._recent.remember(lease.key, last, logged)
            self._signal(lease.key, last)
        finally:
            if self._held.get(lease.key) == lease.token:
                del self._held[lease.key]

    def holds(self, key: LogKey) -> bool:
        """Whether this log holds the session's lease (taken here, not released yet)."""
        return key in self._held

    async def active(self, key: LogKey) -> ActiveRun | None:
        """The run holding an unexpired lease, if any."""
        cols = "token, holder, reply_id, expires, interrupt"
        row = await self._call(partial(_head, key=key, cols=cols), write=False)
        if row is None:
            return None
        token, holder, reply_id, expires, interrupt = row
        if not holder or not isinstance(expires, float | int) or expires <= time.time():
            return None
        return ActiveRun(token=int(str(token)), reply_id=str(reply_id), interrupt=bool(interrupt))

    async def request_interrupt(self, key: LogKey) -> ActiveRun | None:
        """Flag the active run to stop."""
        run = await self.active(key)
        if run is None:
            return None

        def flag(db: sqlite3.Connection) -> None:
            db.execute(
                f"UPDATE tether_event_heads SET interrupt = 1 WHERE {_HEAD} AND token = ?",
                (*_ids(key), run.token),
            )

        await self._call(flag)
        return ActiveRun(token=run.token, reply_id=run.reply_id, interrupt=True)

    async def read(self, key: LogKey, after: int, limit: int = 500) -> list[LogEntry]:
        """Entries above `after`, in order (of a run this process holds: from memory)."""
        local = self._recent.read(key, after, limit) if key in self._held else None
        if local is not None:
            return local

        def run(db: sqlite3.Connection) -> list[LogEntry]:
            rows = db.execute(
                f"SELECT seq, type, data FROM tether_events WHERE {_HEAD} AND seq > ?"
                " ORDER BY seq LIMIT ?",
                (*_ids(key), after, limit),
            ).fetchall()
            return [LogEntry(seq=int(s), type=str(t), data=str(d)) for s, t, d in rows]

        return await self._call(run, write=False)

    async def last_seq(self, key: LogKey) -> int:
        """The sequence number of the last entry (0 if none)."""
        row = await self._call(partial(_head, key=key, cols="last_seq"), write=False)
        return 0 if row is None else int(str(row[0]))

    async def wait(self, key: LogKey, after: int, seconds: float) -> bool:
        """Wake on an append by this process, or poll the file for other processes'."""
        deadline = time.monotonic() + seconds
        while True:
            signal = self._signals.setdefault(key, asyncio.Event())
            if self._last.get(key, 0) > after:
                return True
            left = deadline - time.monotonic()
            if left <= 0:
                return False
            # A run of this process signals its appends; only another process's run is polled.
            local = key in self._held
            try:
                async with asyncio.timeout(left if local else min(left, _POLL)):
                    await signal.wait()  # (`asyncio.timeout`: no task per wait, as `wait_for`)
                return True
            except TimeoutError:
                if not local and await self.last_seq(key) > after:
                    return True

    async def delete(self, key: LogKey) -> None:
        """Remove the log, lease and binding of a session.

        The counters stay: a session created again under the same id continues the
        sequence and token numbers, so a stale worker's token never fits the new one.
        """

        def run(db: sqlite3.Connection) -> None:
            db.execute(f"DELETE FROM tether_events WHERE {_HEAD}", _ids(key))
            db.execute(
                "UPDATE tether_event_heads SET agent_id = NULL, holder = 0, expires = 0,"
                f" interrupt = 0, reply_id = '' WHERE {_HEAD}",
                _ids(key),
            )

        await self._call(run)
        self._recent.forget(key)
        self._signal(key)

    async def ping(self) -> None:
        """Raise `StorageUnavailableError` unless the file answers."""
        await self._call(partial(_head, key=LogKey("", ""), cols="last_seq"), write=False)


def _insert(db: sqlite3.Connection, key: LogKey, last: int, items: Sequence[LogItem]) -> None:
    """Insert `items` numbered from `last + 1`."""
    db.executemany(
        "INSERT INTO tether_events (user_id, session_id, seq, type, data) VALUES (?, ?, ?, ?, ?)",
        [(*_ids(key), last + i, it.type, it.data) for i, it in enumerate(items, 1)],
    )


def _lost(lease: Lease) -> LeaseLostError:
    return LeaseLostError(
        f"the lease on session {lease.key.session_id!r} was taken over by another "
        "worker (or the session was deleted); this run stops without writing"
    )


def _ids(key: LogKey) -> tuple[str, str]:
    return (key.user_id, key.session_id)


def _head(db: sqlite3.Connection, key: LogKey, cols: str) -> tuple[object, ...] | None:
    row = db.execute(f"SELECT {cols} FROM tether_event_heads WHERE {_HEAD}", _ids(key)).fetchone()
    return None if row is None else tuple(row)


def _set_up(db: sqlite3.Connection) -> None:
    """WAL mode and the tables, once per open (on the thread's connection)."""
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(_SCHEMA)
