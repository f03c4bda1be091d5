"""`SQLiteStorage`: the embedded default; one file, WAL, one thread of its own."""

from __future__ import annotations

import logging
import os
import sqlite3
from collections.abc import Callable, Iterable
from datetime import datetime
from functools import partial
from typing import Any, TypeVar

from tether.app.storage._base import StorageBase, conflict, fenced, not_found, recreated
from tether.app.storage._codec import decode_metadata, listed, parse_time, time_text
from tether.app.storage._record import (
    SessionDelta,
    SessionInfo,
    SessionKey,
    SessionUpsert,
    SessionVersion,
    StoredSession,
)
from tether.app.storage._sqlite_file import SQLiteFile
from tether.errors import ConfigError, SessionCorruptedError, StorageUnavailableError

__all__ = ["DEFAULT_SQLITE_PATH", "THREAD_NAME", "SQLiteStorage"]

_T = TypeVar("_T")

logger = logging.getLogger("tether.storage")

DEFAULT_SQLITE_PATH = ".tether/sessions.db"
"""Where `SQLiteStorage()` keeps sessions when no path is given (relative to the cwd)."""
THREAD_NAME = "tether-sqlite-storage"
"""The name prefix of the thread each open `SQLiteStorage` runs its transactions on."""

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
    fence INTEGER NOT NULL DEFAULT 0,
    UNIQUE (user_id, agent_id, session_id)
);
CREATE TABLE IF NOT EXISTS tether_messages (
    sid INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    body BLOB NOT NULL,
    PRIMARY KEY (sid, seq)
) WITHOUT ROWID;
"""
# The largest fencing token a write came with (`StorageBase.fence_session`).
_ADD_FENCE = "ALTER TABLE tether_sessions ADD COLUMN fence INTEGER NOT NULL DEFAULT 0"
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

    Each call is one transaction, run on the event loop's thread: a WAL read never waits
    for a writer, and a write (no fsync with `synchronous=NORMAL`) costs less than a trip
    to a thread and back. A write that finds the file locked by another process waits
    for it (up to `busy_timeout`) on the storage's own thread instead, which also runs
    the WAL checkpoints, so the event loop never sleeps on a lock.

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
        self._file = SQLiteFile(self.path, busy_timeout, THREAD_NAME, self._unavailable)

    def __repr__(self) -> str:
        return f"SQLiteStorage({self.path!r})"

    def _where(self, key: SessionKey) -> str:
        return f"SQLite {self.path!r} row {key}"

    async def _open(self) -> None:
        await self._file.open(_set_up)

    async def _close(self) -> None:
        await self._file.close()

    def _unavailable(self, exc: BaseException) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"the SQLite database at {self.path!r} cannot be used ({exc}); check that the "
            "path is a writable file in an existing directory and not locked by another "
            "process for longer than `busy_timeout`; nothing was written"
        )

    async def _transaction(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool) -> _T:
        """Run `fn` in one transaction (see `SQLiteFile.run`)."""
        if not self._file.is_open:
            raise StorageUnavailableError(
                f"{self!r} is closed; open it again with `async with storage:`"
            )
        return await self._file.run(fn, write=write)

    async def _fetch(self, key: SessionKey) -> StoredSession | None:
        return await self._transaction(partial(self._read, key=key), write=False)

    def _read(self, db: sqlite3.Connection, key: SessionKey) -> StoredSession | None:
        row = _one(db, f"SELECT {_HEAD_COLS} FROM tether_sessions WHERE {_BY_KEY}", key)
        if row is None:
            return None
        sid, version, head, n, created, updated, meta = row
        rows = db.execute(
            "SELECT seq, CAST(body AS BLOB) FROM tether_messages WHERE sid = ? ORDER BY seq",
            (sid,),
        ).fetchall()
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
        stored = await self._transaction(partial(self._upsert_in, key=key, write=write), write=True)
        assert stored is not None  # written in this transaction
        return stored

    def _upsert_in(
        self, db: sqlite3.Connection, key: SessionKey, write: SessionUpsert
    ) -> StoredSession | None:
        now = write.now.isoformat()
        row = _one(db, f"SELECT sid, version FROM tether_sessions WHERE {_BY_KEY}", key)
        if row is None:
            cursor = db.execute(
                "INSERT INTO tether_sessions (user_id, agent_id, session_id, version, head,"
                " n, created_at, updated_at, metadata) VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?)",
                (*_ids(key), write.head, len(write.bodies), now, now, write.metadata or "{}"),
            )
            _put_bodies(db, cursor.lastrowid, enumerate(write.bodies))
        elif write.replace:
            sid = row[0]
            db.execute("DELETE FROM tether_messages WHERE sid = ?", (sid,))
            _put_bodies(db, sid, enumerate(write.bodies))
            db.execute(
                "UPDATE tether_sessions SET version = version + 1, head = ?, n = ?,"
                " updated_at = ?, metadata = coalesce(?, metadata) WHERE sid = ?",
                (write.head, len(write.bodies), now, write.metadata, sid),
            )
        elif write.metadata is not None:
            db.execute(
                "UPDATE tether_sessions SET metadata = ?, updated_at = ? WHERE sid = ?",
                (write.metadata, now, row[0]),
            )
        return self._read(db, key)

    async def _apply(self, key: SessionKey, delta: SessionDelta) -> int:
        # `_saving` opened the storage: straight to the file (one coroutine less a save)
        return await self._file.run(partial(_apply_in, key=key, delta=delta), write=True)

    async def _fence(self, key: SessionKey, token: int) -> SessionVersion | None:
        row = await self._transaction(partial(_fence_in, key=key, token=token), write=True)
        if row is None:
            return None
        where = self._where(key)
        return SessionVersion(_count(key, where, "version", row[0]), parse_time(key, where, row[1]))

    async def _remove(self, key: SessionKey) -> bool:
        return await self._transaction(partial(_remove_in, key=key), write=True)

    async def _scan(self, user_id: str, agent_id: str | None) -> list[SessionInfo]:
        query = f"SELECT {_LIST_COLS} FROM tether_sessions WHERE user_id = ?"
        args: tuple[str, ...] = (user_id,)
        if agent_id is not None:
            query += " AND agent_id = ?"
            args += (agent_id,)
        rows = await self._transaction(lambda db: db.execute(query, args).fetchall(), write=False)
        infos = []
        for u, a, s, *fields in rows:
            key = _row_key(u, a, s)
            if key is None:
                continue
            info = listed(key, partial(_info, key, self._where(key), *fields))
            if info is not None:
                infos.append(info)
        return infos


_NO_FENCE = (0, 1 << 62)  # (raise the fence to, refuse above): an unfenced write


def _apply_in(db: sqlite3.Connection, key: SessionKey, delta: SessionDelta) -> int:
    """The conditional write of `delta`: version, creation time and fence checked in one step."""
    fence = _NO_FENCE if delta.fence is None else (delta.fence, delta.fence)
    row = _one(
        db,
        "UPDATE tether_sessions SET version = version + 1, head = ?, n = ?,"
        f" updated_at = ?, fence = max(fence, ?) WHERE {_BY_KEY} AND version = ?"
        " AND created_at = ? AND fence <= ? RETURNING sid, version",
        (
            delta.head,
            delta.count,
            time_text(delta.now),
            fence[0],
            *_ids(key),
            delta.expected_version,
            _created_text(delta.created_at),
            fence[1],
        ),
    )
    if row is None:
        current = _one(db, f"SELECT version, fence FROM tether_sessions WHERE {_BY_KEY}", key)
        if current is None:
            raise not_found(key)
        if delta.fence is not None and current[1] > delta.fence:
            raise fenced(key, delta.fence, current[1])
        if current[0] == delta.expected_version:
            raise recreated(key)
        raise conflict(key, delta.expected_version, current[0])
    sid, version = row
    if delta.count < delta.base_count:
        db.execute("DELETE FROM tether_messages WHERE sid = ? AND seq >= ?", (sid, delta.count))
    _put_bodies(db, sid, [*delta.changed, *enumerate(delta.appended, start=delta.base_count)])
    return int(version)


_last_created: tuple[object, str] = (None, "")


def _created_text(moment: datetime) -> str:
    """`moment.isoformat()`, kept for the same object.

    Every save of a state passes the creation time it loaded, and formatting it costs
    more than the rest of the row.
    """
    global _last_created
    last = _last_created  # one tuple, replaced whole: safe on the file's thread too
    if last[0] is moment:
        return last[1]
    text = moment.isoformat()
    _last_created = (moment, text)
    return text


def _fence_in(db: sqlite3.Connection, key: SessionKey, token: int) -> tuple[Any, Any] | None:
    row = _one(
        db,
        f"UPDATE tether_sessions SET fence = ? WHERE {_BY_KEY} AND fence <= ?"
        " RETURNING version, CAST(created_at AS BLOB)",
        (token, *_ids(key), token),
    )
    if row is not None:
        return (row[0], row[1])
    current = _one(db, f"SELECT fence FROM tether_sessions WHERE {_BY_KEY}", key)
    if current is None:
        return None
    raise fenced(key, token, current[0])


def _remove_in(db: sqlite3.Connection, key: SessionKey) -> bool:
    row = _one(db, f"SELECT sid FROM tether_sessions WHERE {_BY_KEY}", key)
    if row is None:
        return False
    db.execute("DELETE FROM tether_messages WHERE sid = ?", (row[0],))
    db.execute("DELETE FROM tether_sessions WHERE sid = ?", (row[0],))
    return True


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


def _set_up(db: sqlite3.Connection) -> None:
    """WAL mode and the tables, once per open (on the thread's connection)."""
    db.execute("PRAGMA journal_mode = WAL")
    db.executescript(_SCHEMA)
    columns = {row[1] for row in db.execute("PRAGMA table_info(tether_sessions)")}
    if "fence" not in columns:  # a file written before fencing tokens
        db.execute(_ADD_FENCE)


def _ids(key: SessionKey) -> tuple[str, str, str]:
    return (key.user_id, key.agent_id, key.session_id)


def _one(db: sqlite3.Connection, query: str, args: Any) -> Any:
    if isinstance(args, SessionKey):
        args = _ids(args)
    cursor = db.execute(query, args)
    row = cursor.fetchone()
    cursor.close()
    return row


def _put_bodies(db: sqlite3.Connection, sid: Any, rows: Iterable[tuple[int, bytes]]) -> None:
    db.executemany(
        "INSERT OR REPLACE INTO tether_messages (sid, seq, body) VALUES (?, ?, ?)",
        [(sid, seq, body) for seq, body in rows],
    )
