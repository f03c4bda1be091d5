"""`PostgresEventLog`: event logs and leases in PostgreSQL, followers woken by LISTEN/NOTIFY.

Tables (migrated like the sessions'): `tether_event_heads`, a row per session (agent,
last sequence number, the lease: token, holder, expiry on the server's clock, reply,
interrupt flag), and `tether_events`, a row per entry. Every append is one statement
that checks the lease and the expected last number, inserts the rows and sends a
`NOTIFY` (delivered at commit); each log object keeps one connection `LISTEN`ing, so a
follower waits on an in-process signal, with no polling loop.

A call whose connection breaks runs again (see `PgPool`); an append knows whether its
first try landed (the head's last number moved by exactly its entries under its token),
so a retry never logs an entry twice.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from collections import OrderedDict
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING, Any

from tether._ids import new_id
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
from tether.app.storage._postgres_pool import PgPool, check_schema_name
from tether.app.storage._postgres_schema import EVENTS, migrate, qualify
from tether.errors import LeaseLostError

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresEventLog"]

log = logging.getLogger("tether.storage")

_KEY = "user_id = %(u)s AND session_id = %(s)s"
_MAX_PAYLOAD = 7000  # bytes; NOTIFY takes < 8000, a longer one wakes every follower
_LAST_KEPT = 10_000  # sessions whose last notified number this process remembers

_ACQUIRE = """
INSERT INTO {s}tether_event_heads AS h (user_id, session_id, token, holder, expires)
VALUES (%(u)s, %(s)s, 1, %(holder)s, clock_timestamp() + %(ttl)s * interval '1 second')
ON CONFLICT (user_id, session_id) DO UPDATE SET token = h.token + 1, holder = %(holder)s,
    reply_id = '', interrupt = false,
    expires = clock_timestamp() + %(ttl)s * interval '1 second'
WHERE h.holder = '' OR h.expires <= clock_timestamp()
RETURNING token, last_seq
"""
# Append (and renew, or release): the lease and the expected last number checked, the
# entries inserted and the followers notified, in one statement.
_WRITE = f"""
WITH h AS (
    UPDATE {{s}}tether_event_heads SET last_seq = %(last)s,
        reply_id = coalesce(%(reply)s, reply_id), {{set}}
    WHERE {_KEY} AND token = %(token)s AND holder <> '' AND last_seq = %(expected)s
    RETURNING interrupt
), ins AS (
    INSERT INTO {{s}}tether_events (user_id, session_id, seq, type, data)
    SELECT %(u)s, %(s)s, %(expected)s + t.ord, t.type, t.data
    FROM h, unnest(%(types)s::text[], %(datas)s::text[]) WITH ORDINALITY AS t(type, data, ord)
), n AS (
    SELECT pg_notify(%(channel)s, %(payload)s) FROM h WHERE %(notify)s
)
SELECT h.interrupt, (SELECT count(*) FROM n) FROM h
"""
_SETS = {
    "append": "interrupt = interrupt",
    "renew": "expires = clock_timestamp() + %(ttl)s * interval '1 second'",
    "release": "holder = '', expires = '-infinity', interrupt = false",
}
_DELETE = f"""
WITH e AS (DELETE FROM {{s}}tether_events WHERE {_KEY}),
     h AS (UPDATE {{s}}tether_event_heads SET agent_id = NULL, holder = '',
           expires = '-infinity', interrupt = false, reply_id = '' WHERE {_KEY})
SELECT pg_notify(%(channel)s, %(payload)s)
"""


class PostgresEventLog(EventLogBase):
    """Event logs and leases in PostgreSQL (the sessions' database), for many workers.

    The delete of a session's log keeps its counters (the next run continues the numbers
    and tokens), as the other logs do. Lease expiry uses the server's clock.

    Args:
        dsn: The database (the `PostgresStorage`'s DSN).
        schema: The PostgreSQL schema of the tables (as the storage's); None: search path.
        pool_size: Connections opened at most (plus one that listens).
        pool_timeout: Seconds a call waits for a free connection (`StorageBusyError`).
        retry_for: Seconds a call whose connection broke is retried for.
    """

    def __init__(
        self,
        dsn: str,
        *,
        schema: str | None = None,
        pool_size: int = 10,
        pool_timeout: float = 30.0,
        retry_for: float = 15.0,
    ) -> None:
        self.schema = check_schema_name(schema)
        self._pool = PgPool(
            dsn,
            "PostgresEventLog",
            pool_size=pool_size,
            pool_timeout=pool_timeout,
            retry_for=retry_for,
        )
        self.dsn = dsn
        digest = hashlib.sha256((self.schema or "").encode()).hexdigest()[:16]
        self.channel = f"tether_events_{digest}"
        q = partial(qualify, schema=self.schema)
        self._q = q
        self._sql = {
            name: q(_WRITE.replace("{set}", sets)).encode() for name, sets in _SETS.items()
        }
        self._signals: dict[LogKey, asyncio.Event] = {}
        self._last: OrderedDict[LogKey, int] = OrderedDict()  # last number notified
        self._held: dict[LogKey, int] = {}  # leases this process holds: key -> token
        self._seq: dict[LogKey, tuple[int, int]] = {}  # held key -> (token, last number)
        self._recent = RecentEntries()
        # One write at a time per session here: each knows the last number it extends.
        self._locks: dict[LogKey, asyncio.Lock] = {}
        self._listener: asyncio.Task[None] | None = None

    def __repr__(self) -> str:
        schema = f", schema={self.schema!r}" if self.schema else ""
        return f"PostgresEventLog({self._pool.address!r}{schema})"

    async def open(self) -> None:
        """Connect, migrate the tables, and start listening (idempotent)."""
        if self._pool.is_open:
            return
        await self._pool.open(
            partial(migrate, schema=self.schema, component="events", steps=EVENTS)
        )
        try:
            conn = await self._listen()
        except BaseException:
            await self._pool.close()
            raise
        self._listener = asyncio.create_task(self._follow(conn), name="tether-pg-listen")

    async def close(self) -> None:
        """Stop listening and close the connections (idempotent)."""
        task, self._listener = self._listener, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self._pool.close()
        self._wake_all()

    async def _listen(self) -> AsyncConnection[Any]:
        import psycopg

        try:
            conn = await psycopg.AsyncConnection.connect(self.dsn, autocommit=True)
            await conn.execute(f'LISTEN "{self.channel}"')
        except psycopg.Error as exc:
            raise self._pool.unavailable(exc) from exc
        return conn

    async def _follow(self, conn: AsyncConnection[Any]) -> None:
        """Turn notifications into signals; reconnect (and wake everyone) when cut off."""
        import psycopg

        delay = 0.05
        while True:
            try:
                async with conn:
                    async for note in conn.notifies():
                        self._notified(note.payload)
                        delay = 0.05
            except psycopg.Error as exc:
                log.warning("event log: lost its LISTEN connection (%s); reconnecting", exc)
            self._wake_all()  # what was sent while cut off: followers read the table
            while True:
                await asyncio.sleep(delay)
                delay = min(delay * 2, 1.0)
                try:
                    conn = await self._listen()
                    break
                except Exception:  # the server is still down: try again
                    continue
            self._wake_all()

    def _notified(self, payload: str) -> None:
        try:
            seq, user_id, session_id = json.loads(payload)
        except ValueError:
            self._wake_all()  # "*": a payload too long to carry the key
            return
        self._signal(LogKey(user_id, session_id), int(seq))

    def _signal(self, key: LogKey, seq: int) -> None:
        if seq > self._last.get(key, 0):
            self._last[key] = seq
            self._last.move_to_end(key)
            while len(self._last) > _LAST_KEPT:
                self._last.popitem(last=False)
        event = self._signals.pop(key, None)
        if event is not None:
            event.set()

    def _wake_all(self) -> None:
        signals, self._signals = self._signals, {}
        for event in signals.values():
            event.set()

    def _payload(self, key: LogKey, seq: int) -> str:
        text = json.dumps([seq, key.user_id, key.session_id])
        return text if len(text.encode()) <= _MAX_PAYLOAD else "*"

    async def _run(self, fn: Any) -> Any:
        if not self._pool.is_open:
            await self.open()
        return await self._pool.run(fn)

    async def _one(self, sql: str, params: dict[str, Any]) -> Any:
        async def run(conn: AsyncConnection[Any]) -> Any:
            cur = await conn.execute(self._q(sql).encode(), params)
            return await cur.fetchone()

        return await self._run(run)

    async def bind(self, key: LogKey, agent_id: str) -> str:
        """Record the session's agent (an existing binding wins); return the agent."""
        row = await self._one(
            "INSERT INTO {s}tether_event_heads AS h (user_id, session_id, agent_id)"
            " VALUES (%(u)s, %(s)s, %(a)s) ON CONFLICT (user_id, session_id) DO UPDATE"
            " SET agent_id = coalesce(h.agent_id, excluded.agent_id) RETURNING agent_id",
            {**_ids(key), "a": agent_id},
        )
        return str(row[0])

    async def agent_of(self, key: LogKey) -> str | None:
        """The session's agent, if bound."""
        row = await self._one(
            f"SELECT agent_id FROM {{s}}tether_event_heads WHERE {_KEY}", _ids(key)
        )
        return None if row is None or row[0] is None else str(row[0])

    async def acquire(self, key: LogKey, ttl: float) -> Lease:
        """Take the lease, or raise `ReplyInProgressError` naming the running reply."""
        holder = new_id()
        params = {**_ids(key), "holder": holder, "ttl": ttl}

        async def run(conn: AsyncConnection[Any]) -> Any:
            cur = await conn.execute(self._q(_ACQUIRE).encode(), params)
            row = await cur.fetchone()
            if row is not None:
                return Lease(key=key, token=int(row[0]), start_seq=int(row[1]))
            cur = await conn.execute(
                self._q(
                    f"SELECT token, last_seq, holder, reply_id FROM {{s}}tether_event_heads"
                    f" WHERE {_KEY}"
                ).encode(),
                params,
            )
            token, last, held_by, reply_id = await cur.fetchone() or (0, 0, "", "")
            if held_by == holder:  # this very call took it before its connection broke
                return Lease(key=key, token=int(token), start_seq=int(last))
            return str(reply_id)

        got: Lease | str = await self._run(run)
        if isinstance(got, str):
            raise busy(got)
        self._held[key] = got.token
        self._seq[key] = (got.token, got.start_seq)
        self._recent.start(key, got.start_seq)
        return got

    async def _write(
        self, kind: str, lease: Lease, items: Sequence[LogItem], ttl: float = 0.0
    ) -> tuple[bool, int] | None:
        """One checked write; (interrupt, last number), or None if the lease is not ours."""
        lock = self._locks.setdefault(lease.key, asyncio.Lock())
        async with lock:
            return await self._write_locked(kind, lease, items, ttl)

    async def _write_locked(
        self, kind: str, lease: Lease, items: Sequence[LogItem], ttl: float
    ) -> tuple[bool, int] | None:
        key = lease.key
        known = self._seq.get(key)
        expected = known[1] if known is not None and known[0] == lease.token else None
        if expected is None:
            expected = await self.last_seq(key)
        state = {"expected": expected, "tries": 0}

        async def run(conn: AsyncConnection[Any]) -> tuple[bool, int] | None:
            state["tries"] += 1
            for _ in range(2):
                last = state["expected"] + len(items)
                params = {
                    **_ids(key),
                    "last": last,
                    "expected": state["expected"],
                    "reply": items[-1].reply_id if items else None,
                    "token": lease.token,
                    "ttl": ttl,
                    "types": [it.type for it in items],
                    "datas": [it.data for it in items],
                    "channel": self.channel,
                    "payload": self._payload(key, last),
                    "notify": bool(items) or kind == "release",
                }
                cur = await conn.execute(self._sql[kind], params)
                row = await cur.fetchone()
                if row is not None:
                    return bool(row[0]), last
                cur = await conn.execute(
                    self._q(
                        f"SELECT token, holder, last_seq, interrupt FROM {{s}}tether_event_heads"
                        f" WHERE {_KEY}"
                    ).encode(),
                    params,
                )
                token, holder, stored, interrupt = await cur.fetchone() or (0, "", -1, False)
                if token != lease.token:
                    return None
                landed = stored == last and (bool(holder) or kind == "release")
                if landed and state["tries"] > 1:  # an earlier try landed, then the break
                    return bool(interrupt), last
                if not holder:
                    return None
                state["expected"] = int(stored)  # an earlier write's outcome was unknown
            return None

        got: tuple[bool, int] | None = await self._run(run)
        if got is not None and kind != "release":
            self._seq[key] = (lease.token, got[1])
        return got

    async def renew(self, lease: Lease, ttl: float, items: Sequence[LogItem] = ()) -> bool:
        """Append `items`, extend the lease; whether an interrupt was asked for."""
        got = await self._write("renew", lease, items, ttl)
        if got is None:
            raise _lost(lease)
        if items:
            self._recent.remember(lease.key, got[1], items)
            self._signal(lease.key, got[1])
        return got[0]

    async def append(self, lease: Lease, items: Sequence[LogItem]) -> int:
        """Append events if the lease is still ours; the last sequence number."""
        got = await self._write("append", lease, items)
        if got is None:
            raise _lost(lease)
        self._recent.remember(lease.key, got[1], items)
        self._signal(lease.key, got[1])
        return got[1]

    async def release(
        self, lease: Lease, items: Sequence[LogItem] = (), *, mark_end: bool = True
    ) -> None:
        """Log `items` and the end marker, give the lease back (no-op if taken over)."""
        end = [LogItem("", "", str(lease.token))] if mark_end else []
        logged = [*items, *end]
        try:
            got = await self._write("release", lease, logged)
            if got is not None:
                self._recent.remember(lease.key, got[1], logged)
                self._signal(lease.key, got[1])
        finally:
            if self._held.get(lease.key) == lease.token:
                del self._held[lease.key]
                self._seq.pop(lease.key, None)
                self._locks.pop(lease.key, None)

    def holds(self, key: LogKey) -> bool:
        """Whether this log holds the session's lease (taken here, not released yet)."""
        return key in self._held

    async def active(self, key: LogKey) -> ActiveRun | None:
        """The run holding an unexpired lease, if any."""
        row = await self._one(
            f"SELECT token, reply_id, interrupt FROM {{s}}tether_event_heads WHERE {_KEY}"
            " AND holder <> '' AND expires > clock_timestamp()",
            _ids(key),
        )
        if row is None:
            return None
        return ActiveRun(token=int(row[0]), reply_id=str(row[1]), interrupt=bool(row[2]))

    async def request_interrupt(self, key: LogKey) -> ActiveRun | None:
        """Flag the active run to stop."""
        row = await self._one(
            f"UPDATE {{s}}tether_event_heads SET interrupt = true WHERE {_KEY}"
            " AND holder <> '' AND expires > clock_timestamp() RETURNING token, reply_id",
            _ids(key),
        )
        if row is None:
            return None
        return ActiveRun(token=int(row[0]), reply_id=str(row[1]), interrupt=True)

    async def read(self, key: LogKey, after: int, limit: int = 500) -> list[LogEntry]:
        """Entries above `after`, in order (of a run this process holds: from memory)."""
        local = self._recent.read(key, after, limit) if key in self._held else None
        # A NOTIFY can arrive before the append that sent it returns and keeps its
        # entries here: then read the table (answering "nothing new" from memory without
        # awaiting would spin a follower that `wait` wakes at once, starving the loop).
        if local is not None and (local or self._last.get(key, 0) <= after):
            return local

        async def run(conn: AsyncConnection[Any]) -> list[Any]:
            cur = await conn.execute(
                self._q(
                    f"SELECT seq, type, data FROM {{s}}tether_events WHERE {_KEY}"
                    " AND seq > %(after)s ORDER BY seq LIMIT %(limit)s"
                ).encode(),
                {**_ids(key), "after": after, "limit": limit},
            )
            return await cur.fetchall()

        rows = await self._run(run)
        return [LogEntry(seq=int(s), type=str(t), data=str(d)) for s, t, d in rows]

    async def last_seq(self, key: LogKey) -> int:
        """The sequence number of the last entry (0 if none)."""
        row = await self._one(
            f"SELECT last_seq FROM {{s}}tether_event_heads WHERE {_KEY}", _ids(key)
        )
        return 0 if row is None else int(row[0])

    async def wait(self, key: LogKey, after: int, seconds: float) -> bool:
        """Return True once an entry above `after` may exist (a NOTIFY); False on timeout."""
        if self._last.get(key, 0) > after:
            return True
        signal = self._signals.setdefault(key, asyncio.Event())
        try:
            async with asyncio.timeout(seconds):
                await signal.wait()  # (`asyncio.timeout`: no task per wait, as `wait_for`)
            return True
        except TimeoutError:
            return False

    async def delete(self, key: LogKey) -> None:
        """Remove the log, lease and binding (the counters stay, see `SQLiteEventLog`)."""
        self._recent.forget(key)
        await self._one(
            _DELETE, {**_ids(key), "channel": self.channel, "payload": self._payload(key, 0)}
        )

    async def ping(self) -> None:
        """Raise `StorageUnavailableError` unless the server answers."""
        await self._one("SELECT 1", {})


def _lost(lease: Lease) -> LeaseLostError:
    return LeaseLostError(
        f"the lease on session {lease.key.session_id!r} was taken over by another "
        "worker (or the session was deleted); this run stops without writing"
    )


def _ids(key: LogKey) -> dict[str, Any]:
    return {"u": key.user_id, "s": key.session_id}
