"""`PostgresStorage`: sessions in PostgreSQL for many workers (psycopg 3 and its pool)."""

from __future__ import annotations

from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any

from tether.app.storage._base import StorageBase, conflict, fenced, not_found, recreated
from tether.app.storage._codec import decode_metadata, listed
from tether.app.storage._postgres_pool import PgPool, check_schema_name
from tether.app.storage._postgres_schema import SESSIONS, migrate, qualify
from tether.app.storage._record import (
    SessionDelta,
    SessionInfo,
    SessionKey,
    SessionUpsert,
    SessionVersion,
    StoredSession,
)
from tether.errors import SessionCorruptedError

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresStorage"]

_BY_KEY = "user_id = %s AND agent_id = %s AND session_id = %s"
_MAX_FENCE = 1 << 62

# One statement per read: one snapshot for the head and the messages.
_FETCH = f"""
SELECT s.version, s.head, s.n, s.created_at, s.updated_at, s.metadata,
       coalesce((SELECT array_agg(m.body ORDER BY m.seq) FROM {{s}}tether_messages m
                 WHERE m.sid = s.sid), '{{}}')
FROM {{s}}tether_sessions s WHERE {_BY_KEY}
"""
# The conditional write of a delta, whole, in one statement (atomic without a transaction,
# one round trip): the head if version, creation time and fence match; the log truncated
# (a shorter state) or its changed and appended rows written.
_APPLY = """
WITH up AS (
    UPDATE {s}tether_sessions SET version = version + 1, head = %(head)s, n = %(count)s,
        updated_at = %(now)s, fence = greatest(fence, %(fence)s), write_id = %(write_id)s
    WHERE user_id = %(user_id)s AND agent_id = %(agent_id)s AND session_id = %(session_id)s
      AND version = %(expected)s AND created_at = %(created_at)s AND fence <= %(refuse)s
    RETURNING sid, version
), cut AS (
    DELETE FROM {s}tether_messages
    WHERE sid = (SELECT sid FROM up) AND seq >= %(count)s AND %(count)s < %(base)s
), put AS (
    INSERT INTO {s}tether_messages (sid, seq, body)
    SELECT up.sid, t.seq, t.body FROM up, unnest(%(seqs)s::integer[], %(bodies)s::bytea[])
        AS t(seq, body)
    ON CONFLICT (sid, seq) DO UPDATE SET body = excluded.body
)
SELECT version FROM up
"""
_FENCE = f"""
UPDATE {{s}}tether_sessions SET fence = %s WHERE {_BY_KEY} AND fence <= %s
RETURNING version, created_at
"""
_REMOVE = f"""
WITH gone AS (DELETE FROM {{s}}tether_sessions WHERE {_BY_KEY} RETURNING sid),
     msgs AS (DELETE FROM {{s}}tether_messages WHERE sid IN (SELECT sid FROM gone))
SELECT count(*) FROM gone
"""
_LIST = """
SELECT agent_id, session_id, version, created_at, updated_at, metadata, n
FROM {s}tether_sessions WHERE user_id = %s
"""


class PostgresStorage(StorageBase):
    """Sessions in PostgreSQL: versioned O(Δ) writes, fencing tokens, a pool of connections.

    Tables (created and migrated by the storage when it opens; see `tether_schema`):
    `tether_sessions`, a row per session (version, the state's head, message count,
    fence, the id of the last write), and `tether_messages`, a row per message. A reply
    writes the head and only the messages it changed or added, in one statement.

    A call whose connection breaks (a restart, `pg_terminate_backend`, a network blip)
    runs again on a fresh connection, with backoff, for `retry_for` seconds: reads are
    safe to repeat, and every write carries an id the row keeps, so a write that landed
    before the break is recognised instead of applied twice. Past `retry_for` the call
    raises `StorageUnavailableError` (a reply's checkpoint stops it before its next tool).

    Args:
        dsn: `postgresql://user@host:5432/db` or a libpq conninfo string.
        schema: The PostgreSQL schema of the tables (created if missing); None uses the
            connection's search path (usually `public`).
        pool_size: Connections this storage opens at most.
        pool_timeout: Seconds a call waits for a free connection before
            `StorageBusyError`.
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
        super().__init__()
        self.schema = check_schema_name(schema)
        self._pool = PgPool(
            dsn,
            "PostgresStorage",
            pool_size=pool_size,
            pool_timeout=pool_timeout,
            retry_for=retry_for,
        )
        self.dsn = dsn
        self.pool_size = pool_size
        self.retry_for = retry_for
        q = partial(qualify, schema=self.schema)
        self._sql = {
            name: q(sql).encode()
            for name, sql in (
                ("fetch", _FETCH),
                ("apply", _APPLY),
                ("fence", _FENCE),
                ("remove", _REMOVE),
                ("list", _LIST),
                ("list_agent", _LIST + " AND agent_id = %s"),
            )
        }
        self._q = q

    @property
    def address(self) -> str:
        """The DSN without its password."""
        return self._pool.address

    def __repr__(self) -> str:
        schema = f", schema={self.schema!r}" if self.schema else ""
        return f"PostgresStorage({self.address!r}{schema})"

    def _where(self, key: SessionKey) -> str:
        return f"PostgreSQL {self.address} row {key}"

    async def _open(self) -> None:
        await self._pool.open(
            partial(migrate, schema=self.schema, component="sessions", steps=SESSIONS)
        )

    async def _close(self) -> None:
        await self._pool.close()

    async def _fetch(self, key: SessionKey) -> StoredSession | None:
        async def run(conn: AsyncConnection[Any]) -> Any:
            cur = await conn.execute(self._sql["fetch"], _ids(key))
            return await cur.fetchone()

        row = await self._pool.run(run)
        return None if row is None else self._decode(key, row)

    def _decode(self, key: SessionKey, row: Any) -> StoredSession:
        version, head, n, created, updated, meta, bodies = row
        where = self._where(key)
        if len(bodies) != n:
            raise SessionCorruptedError(
                f"session {key} at {where} should hold {n} messages but holds "
                f"{len(bodies)}; delete it with `delete_session` or restore it from a backup"
            )
        return StoredSession(
            version=int(version),
            head=bytes(head),
            bodies=[bytes(b) for b in bodies],
            created_at=created,
            updated_at=updated,
            metadata=decode_metadata(key, where, meta),
        )

    async def _upsert(self, key: SessionKey, write: SessionUpsert) -> StoredSession:
        q = self._q

        async def run(conn: AsyncConnection[Any]) -> Any:
            async with conn.transaction():
                cur = await conn.execute(
                    q(
                        "INSERT INTO {s}tether_sessions (user_id, agent_id, session_id, version,"
                        " head, n, created_at, updated_at, metadata, write_id)"
                        " VALUES (%s, %s, %s, 1, %s, %s, %s, %s, %s, %s)"
                        " ON CONFLICT (user_id, agent_id, session_id) DO NOTHING RETURNING sid"
                    ),
                    (
                        *_ids(key),
                        write.head,
                        len(write.bodies),
                        write.now,
                        write.now,
                        write.metadata or "{}",
                        write.write_id,
                    ),
                )
                row = await cur.fetchone()
                if row is not None:
                    await _put(conn, q, row[0], range(len(write.bodies)), write.bodies)
                else:
                    await self._update_existing(conn, key, write)
                cur = await conn.execute(self._sql["fetch"], _ids(key))
                return await cur.fetchone()

        return self._decode(key, await self._pool.run(run))

    async def _update_existing(
        self, conn: AsyncConnection[Any], key: SessionKey, write: SessionUpsert
    ) -> None:
        q = self._q
        cur = await conn.execute(
            q(f"SELECT sid, write_id FROM {{s}}tether_sessions WHERE {_BY_KEY} FOR UPDATE"),
            _ids(key),
        )
        sid, write_id = await cur.fetchone() or (None, None)
        if sid is None or write_id == write.write_id:
            return  # this very write landed before its connection broke
        if write.replace:
            await conn.execute(q("DELETE FROM {s}tether_messages WHERE sid = %s"), (sid,))
            await _put(conn, q, sid, range(len(write.bodies)), write.bodies)
            await conn.execute(
                q(
                    "UPDATE {s}tether_sessions SET version = version + 1, head = %s, n = %s,"
                    " updated_at = %s, metadata = coalesce(%s, metadata), write_id = %s"
                    " WHERE sid = %s"
                ),
                (write.head, len(write.bodies), write.now, write.metadata, write.write_id, sid),
            )
        elif write.metadata is not None:
            await conn.execute(
                q(
                    "UPDATE {s}tether_sessions SET metadata = %s, updated_at = %s, write_id = %s"
                    " WHERE sid = %s"
                ),
                (write.metadata, write.now, write.write_id, sid),
            )

    async def _apply(self, key: SessionKey, delta: SessionDelta) -> int:
        seqs = [p for p, _ in delta.changed]
        seqs += range(delta.base_count, delta.count)
        params = {
            "head": delta.head,
            "count": delta.count,
            "base": delta.base_count,
            "now": delta.now,
            "fence": delta.fence or 0,
            "refuse": _MAX_FENCE if delta.fence is None else delta.fence,
            "write_id": delta.write_id,
            "user_id": key.user_id,
            "agent_id": key.agent_id,
            "session_id": key.session_id,
            "expected": delta.expected_version,
            "created_at": delta.created_at,
            "seqs": seqs,
            "bodies": [b for _, b in delta.changed] + list(delta.appended),
        }

        async def run(conn: AsyncConnection[Any]) -> Any:
            cur = await conn.execute(self._sql["apply"], params)
            row = await cur.fetchone()
            if row is not None:
                return int(row[0])
            cur = await conn.execute(
                self._q(
                    f"SELECT version, fence, write_id, created_at FROM {{s}}tether_sessions"
                    f" WHERE {_BY_KEY}"
                ),
                _ids(key),
            )
            return await cur.fetchone() or ()

        got = await self._pool.run(run)
        if isinstance(got, int):
            return got
        if not got:
            raise not_found(key)
        version, fence, write_id, created_at = got
        if write_id == delta.write_id:
            return int(version)  # it landed before the connection broke: not again
        if delta.fence is not None and fence > delta.fence:
            raise fenced(key, delta.fence, int(fence))
        if version == delta.expected_version and created_at != delta.created_at:
            raise recreated(key)
        if version != delta.expected_version:
            raise conflict(key, delta.expected_version, int(version))
        raise recreated(key)

    async def _fence(self, key: SessionKey, token: int) -> SessionVersion | None:
        async def run(conn: AsyncConnection[Any]) -> Any:
            cur = await conn.execute(self._sql["fence"], (token, *_ids(key), token))
            row = await cur.fetchone()
            if row is not None:
                return SessionVersion(int(row[0]), row[1])
            cur = await conn.execute(
                self._q(f"SELECT fence FROM {{s}}tether_sessions WHERE {_BY_KEY}"), _ids(key)
            )
            return await cur.fetchone()

        got = await self._pool.run(run)
        if got is None or isinstance(got, SessionVersion):
            return got
        raise fenced(key, token, int(got[0]))

    async def _remove(self, key: SessionKey) -> bool:
        async def run(conn: AsyncConnection[Any]) -> bool:
            cur = await conn.execute(self._sql["remove"], _ids(key))
            row = await cur.fetchone()
            return bool(row and row[0])

        return await self._pool.run(run)

    async def _scan(self, user_id: str, agent_id: str | None) -> list[SessionInfo]:
        async def run(conn: AsyncConnection[Any]) -> list[Any]:
            if agent_id is None:
                cur = await conn.execute(self._sql["list"], (user_id,))
            else:
                cur = await conn.execute(self._sql["list_agent"], (user_id, agent_id))
            return await cur.fetchall()

        infos = []
        for agent, session, version, created, updated, meta, n in await self._pool.run(run):
            key = SessionKey(user_id, agent, session)
            info = listed(key, partial(self._info, key, version, created, updated, meta, n))
            if info is not None:
                infos.append(info)
        return infos

    def _info(
        self, key: SessionKey, version: int, created: datetime, updated: datetime, meta: str, n: int
    ) -> SessionInfo:
        return SessionInfo(
            user_id=key.user_id,
            agent_id=key.agent_id,
            session_id=key.session_id,
            version=version,
            created_at=created,
            updated_at=updated,
            metadata=decode_metadata(key, self._where(key), meta),
            message_count=n,
        )


async def _put(conn: AsyncConnection[Any], q: Any, sid: int, seqs: Any, bodies: Any) -> None:
    """Insert message rows in one statement."""
    await conn.execute(
        q(
            "INSERT INTO {s}tether_messages (sid, seq, body)"
            " SELECT %s, t.seq, t.body FROM unnest(%s::integer[], %s::bytea[]) AS t(seq, body)"
        ),
        (sid, list(seqs), list(bodies)),
    )


def _ids(key: SessionKey) -> tuple[str, str, str]:
    return (key.user_id, key.agent_id, key.session_id)
