"""`SQLiteStorage`: the embedded default; one file, WAL, aiosqlite."""

from __future__ import annotations

import asyncio
import logging
import os
import sqlite3
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.app.storage._base import StorageBase, conflict, not_found, recreated
from tether.app.storage._codec import decode_metadata, listed, parse_time
from tether.app.storage._record import (
    SessionDelta,
    SessionInfo,
    SessionKey,
    SessionUpsert,
    StoredSession,
)
from tether.errors import ConfigError, SessionCorruptedError, StorageUnavailableError

if TYPE_CHECKING:
    import aiosqlite

__all__ = ["DEFAULT_SQLITE_PATH", "SQLiteStorage"]

logger = logging.getLogger("tether.storage")

DEFAULT_SQLITE_PATH = ".tether/sessions.db"
"""Where `SQLiteStorage()` keeps sessions when no path is given (relative to the cwd)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS tether_sessions (
    sid INTEGER PRIMARY KEY,
    user_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    version INTEGER NOT NULL,
    head BLOB NOT NULL,
    n INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    metadata TEXT NOT NULL,
    UNIQUE (user_id, agent_id, session_id)
);
CREATE TABLE IF NOT EXISTS tether_messages (
    sid INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (sid, seq)
) WITHOUT ROWID;
"""
_BY_KEY = "user_id = ? AND agent_id = ? AND session_id = ?"
# Text is read as bytes (CAST ... AS BLOB) and decoded by us: a value that is not UTF-8
# is then one damaged session, not a `sqlite3.OperationalError` for the whole query.
_HEAD_COLS = (
    "sid, version, CAST(head AS BLOB), n, CAST(created_at AS BLOB),"
    " CAST(updated_at AS BLOB), CAST(metadata AS BLOB)"
)
_LIST_COLS = (
    "CAST(user_id AS BLOB), CAST(agent_id AS BLOB), CAST(session_id AS BLOB), version,"
    " CAST(created_at AS BLOB), CAST(updated_at AS BLOB), CAST(metadata AS BLOB), n"
)


class SQLiteStorage(StorageBase):
    """Sessions in one SQLite file: no server, safe for several processes at once.

    The database runs in WAL mode with `synchronous=NORMAL`: a committed write survives
    a process crash; an OS crash may lose the last commits but never leaves a session
    half-written. Every write is one `BEGIN IMMEDIATE` transaction with a conditional
    `UPDATE ... WHERE version = ?`, so writers in other processes are ordered too.

    Args:
        path: The database file (its directory is created); `":memory:"` for a private
            in-memory database.
        busy_timeout: Seconds to wait for another process's write lock before raising
            `StorageUnavailableError`.
    """

    def __init__(
        self, path: str | os.PathLike[str] = DEFAULT_SQLITE_PATH, *, busy_timeout: float = 5.0
    ) -> None:
        super().__init__()
        if not isinstance(path, str | os.PathLike):
            raise ConfigError(f"path must be a file path or ':memory:', got {path!r}")
        if (
            not isinstance(busy_timeout, int | float)
            or isinstance(busy_timeout, bool)
            or not 0 <= busy_timeout < float("inf")
        ):
            raise ConfigError(
                f"busy_timeout must be a number of seconds >= 0, got {busy_timeout!r}"
            )
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self._db: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"SQLiteStorage({self.path!r})"

    def _where(self, key: SessionKey) -> str:
        return f"SQLite {self.path!r} row {key}"

    async def _open(self) -> None:
        import aiosqlite

        try:
            if self.path != ":memory:":
                await asyncio.to_thread(Path(self.path).parent.mkdir, parents=True, exist_ok=True)
            db = await aiosqlite.connect(self.path, isolation_level=None)
        except (OSError, sqlite3.Error) as exc:
            raise self._unavailable(exc) from exc
        try:
            await db.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout * 1000)}")
            await db.execute("PRAGMA journal_mode = WAL")
            await db.execute("PRAGMA synchronous = NORMAL")
            await db.executescript(_SCHEMA)
        except BaseException as exc:
            await db.close()  # no connection (or thread) outlives a failed open
            if isinstance(exc, sqlite3.Error):
                raise self._unavailable(exc) from exc
            raise
        self._db = db

    async def _close(self) -> None:
        async with self._lock:  # after the transaction in flight, if any
            db, self._db = self._db, None
        if db is not None:
            await db.close()

    def _unavailable(self, exc: BaseException) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"the SQLite database at {self.path!r} cannot be used ({exc}); check that the "
            "path is a writable file in an existing directory and not locked by another "
            "process for longer than `busy_timeout`; nothing was written"
        )

    @asynccontextmanager
    async def _transaction(self, *, write: bool) -> AsyncIterator[aiosqlite.Connection]:
        """One transaction at a time on this connection; maps SQLite errors.

        Whatever happens, cancellation included, the transaction is committed or rolled
        back before the next one starts. A cancelled statement (even `BEGIN`) still runs on
        aiosqlite's thread; the `ROLLBACK` is queued behind it before the cancellation can
        land (aiosqlite queues a call before its first await), and the thread runs calls in
        order, so no statement of the next transaction can slip in between.
        """
        async with self._lock:
            db = self._db
            if db is None:
                raise StorageUnavailableError(
                    f"{self!r} is closed; open it again with `async with storage:`"
                )
            try:
                await db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
                yield db
                await db.execute("COMMIT")
            except BaseException as exc:
                await _rollback(db)
                if isinstance(exc, sqlite3.Error):
                    raise self._unavailable(exc) from exc
                raise

    async def _fetch(self, key: SessionKey) -> StoredSession | None:
        async with self._transaction(write=False) as db:
            return await self._read(db, key)

    async def _read(self, db: aiosqlite.Connection, key: SessionKey) -> StoredSession | None:
        row = await _one(db, f"SELECT {_HEAD_COLS} FROM tether_sessions WHERE {_BY_KEY}", key)
        if row is None:
            return None
        sid, version, head, n, created, updated, meta = row
        cursor = await db.execute(
            "SELECT seq, CAST(body AS BLOB) FROM tether_messages WHERE sid = ? ORDER BY seq",
            (sid,),
        )
        rows = list(await cursor.fetchall())
        where = self._where(key)
        version = _count(key, where, "version", version)
        if len(rows) != n or any(seq != i for i, (seq, _) in enumerate(rows)):
            raise SessionCorruptedError(
                f"session {key} at {where} should hold {n} messages but holds "
                f"{len(rows)}; delete it with `delete_session` or restore it from a backup"
            )
        return StoredSession(
            version=version,
            head=_as_bytes(head),
            bodies=[_as_bytes(body) for _, body in rows],
            created_at=parse_time(key, where, created),
            updated_at=parse_time(key, where, updated),
            metadata=decode_metadata(key, where, meta),
        )

    async def _upsert(self, key: SessionKey, write: SessionUpsert) -> StoredSession:
        now = write.now.isoformat()
        async with self._transaction(write=True) as db:
            row = await _one(db, f"SELECT sid, version FROM tether_sessions WHERE {_BY_KEY}", key)
            if row is None:
                cursor = await db.execute(
                    "INSERT INTO tether_sessions (user_id, agent_id, session_id, version, head,"
                    " n, created_at, updated_at, metadata) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
                    (*_ids(key), write.head, len(write.bodies), now, now, write.metadata or "{}"),
                )
                await _put_bodies(db, cursor.lastrowid, enumerate(write.bodies))
            elif write.replace:
                sid = row[0]
                await db.execute("DELETE FROM tether_messages WHERE sid = ?", (sid,))
                await _put_bodies(db, sid, enumerate(write.bodies))
                await db.execute(
                    "UPDATE tether_sessions SET version = version + 1, head = ?, n = ?,"
                    " updated_at = ?, metadata = coalesce(?, metadata) WHERE sid = ?",
                    (write.head, len(write.bodies), now, write.metadata, sid),
                )
            elif write.metadata is not None:
                await db.execute(
                    "UPDATE tether_sessions SET metadata = ?, updated_at = ? WHERE sid = ?",
                    (write.metadata, now, row[0]),
                )
            stored = await self._read(db, key)
        assert stored is not None  # written in this transaction
        return stored

    async def _apply(self, key: SessionKey, delta: SessionDelta) -> int:
        async with self._transaction(write=True) as db:
            row = await _one(
                db,
                "UPDATE tether_sessions SET version = version + 1, head = ?, n = ?,"
                f" updated_at = ? WHERE {_BY_KEY} AND version = ? AND created_at = ?"
                " RETURNING sid, version",
                (
                    delta.head,
                    delta.count,
                    delta.now.isoformat(),
                    *_ids(key),
                    delta.expected_version,
                    delta.created_at.isoformat(),
                ),
            )
            if row is None:
                current = await _one(
                    db, f"SELECT version FROM tether_sessions WHERE {_BY_KEY}", key
                )
                if current is None:
                    raise not_found(key)
                if current[0] == delta.expected_version:
                    raise recreated(key)
                raise conflict(key, delta.expected_version, current[0])
            sid, version = row
            if delta.count < delta.base_count:
                await db.execute(
                    "DELETE FROM tether_messages WHERE sid = ? AND seq >= ?", (sid, delta.count)
                )
            rows = [*delta.changed, *enumerate(delta.appended, start=delta.base_count)]
            await _put_bodies(db, sid, rows)
        return int(version)

    async def _remove(self, key: SessionKey) -> bool:
        async with self._transaction(write=True) as db:
            row = await _one(db, f"SELECT sid FROM tether_sessions WHERE {_BY_KEY}", key)
            if row is None:
                return False
            await db.execute("DELETE FROM tether_messages WHERE sid = ?", (row[0],))
            await db.execute("DELETE FROM tether_sessions WHERE sid = ?", (row[0],))
            return True

    async def _scan(self, user_id: str, agent_id: str | None) -> list[SessionInfo]:
        query = f"SELECT {_LIST_COLS} FROM tether_sessions WHERE user_id = ?"
        args: tuple[str, ...] = (user_id,)
        if agent_id is not None:
            query += " AND agent_id = ?"
            args += (agent_id,)
        async with self._transaction(write=False) as db:
            cursor = await db.execute(query, args)
            rows = await cursor.fetchall()
        infos = []
        for u, a, s, *fields in rows:
            key = _row_key(u, a, s)
            if key is None:
                continue
            info = listed(key, partial(_info, key, self._where(key), *fields))
            if info is not None:
                infos.append(info)
        return infos


def _info(
    key: SessionKey, where: str, version: Any, created: Any, updated: Any, meta: Any, n: Any
) -> SessionInfo:
    """A row of `tether_sessions` as a listing (`SessionCorruptedError` if it is damaged)."""
    return SessionInfo(
        user_id=key.user_id,
        agent_id=key.agent_id,
        session_id=key.session_id,
        version=_count(key, where, "version", version),
        created_at=parse_time(key, where, created),
        updated_at=parse_time(key, where, updated),
        metadata=decode_metadata(key, where, meta),
        message_count=_count(key, where, "message count", n),
    )


def _row_key(*ids: bytes) -> SessionKey | None:
    """The key of a listed row, or None (logged) if its ids are not UTF-8 text."""
    try:
        return SessionKey(*(raw.decode() for raw in ids))
    except UnicodeDecodeError:
        logger.warning("list_sessions leaves out a session whose ids are not UTF-8: %r", ids)
        return None


def _as_bytes(value: object) -> bytes:
    """A stored JSON value as bytes (rows edited by hand may hold TEXT or numbers)."""
    if isinstance(value, bytes):
        return value
    return str(value).encode()


def _count(key: SessionKey, where: str, name: str, value: object) -> int:
    """A stored version or message count; anything but a non-negative int is corruption."""
    if isinstance(value, int) and value >= 0:
        return value
    raise SessionCorruptedError(
        f"session {key} at {where} has {name} {value!r}, not a count; other sessions are "
        "unaffected: delete it with `delete_session` or restore it from a backup"
    )


async def _rollback(db: aiosqlite.Connection) -> None:
    try:
        await db.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # no transaction is open: it failed to begin, or it committed


def _ids(key: SessionKey) -> tuple[str, str, str]:
    return (key.user_id, key.agent_id, key.session_id)


async def _one(db: aiosqlite.Connection, query: str, args: Any) -> Any:
    if isinstance(args, SessionKey):
        args = _ids(args)
    cursor = await db.execute(query, args)
    row = await cursor.fetchone()
    await cursor.close()
    return row


async def _put_bodies(
    db: aiosqlite.Connection, sid: Any, rows: Iterable[tuple[int, bytes]]
) -> None:
    await db.executemany(
        "INSERT OR REPLACE INTO tether_messages (sid, seq, body) VALUES (?, ?, ?)",
        [(sid, seq, body) for seq, body in rows],
    )
