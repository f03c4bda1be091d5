"""`NotesBase`: small values every worker of a service shares, next to its sessions.

A note is a string under a (scope, name) pair, with an optional lifetime. The service
keeps there what is not part of a session's state and must reach any worker: the OAuth
tokens of each user's MCP servers, and the answers to MCP servers' questions (posted to
one worker, read by the worker whose tool call waits). `SQLiteNotes` (one machine),
`RedisNotes` and `PostgresNotes` implement it; `notes_for(storage)` picks the one that
lives next to a session storage.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from abc import ABC, abstractmethod
from pathlib import Path

from tether.errors import StorageUnavailableError

__all__ = ["NotesBase", "SQLiteNotes", "notes_for", "notes_path"]


class NotesBase(ABC):
    """Strings by (scope, name), shared by every worker on the same backend."""

    async def open(self) -> None:  # noqa: B027  # optional hook
        """Connect (idempotent)."""

    async def close(self) -> None:  # noqa: B027  # optional hook
        """Release connections (idempotent)."""

    @abstractmethod
    async def put(
        self, scope: str, name: str, value: str, *, ttl: float | None = None, only_new: bool = False
    ) -> bool:
        """Store `value` for `ttl` seconds (None: until removed).

        Returns False, changing nothing, if `only_new` and a live note is there already.
        """

    @abstractmethod
    async def get(self, scope: str, name: str) -> str | None:
        """The live note, or None."""

    @abstractmethod
    async def pop(self, scope: str, name: str) -> str | None:
        """Remove the note and return it (None if there was none), in one step."""


def notes_path(sessions_path: str) -> str:
    """The notes' SQLite file next to the sessions' (`x.db` → `x.notes.db`)."""
    if sessions_path == ":memory:":
        return sessions_path
    path = Path(sessions_path)
    return str(path.with_name(f"{path.stem}.notes{path.suffix or '.db'}"))


_SCHEMA = """
CREATE TABLE IF NOT EXISTS tether_notes (
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    expires REAL NOT NULL,
    PRIMARY KEY (scope, name)
) WITHOUT ROWID
"""
_FOREVER = float("inf")


class SQLiteNotes(NotesBase):
    """Notes in a SQLite file (readable by the owner only); several processes may share it."""

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> None:
        self.path = os.fspath(path)
        self.busy_timeout = busy_timeout
        self._db: sqlite3.Connection | None = None
        self._lock = asyncio.Lock()

    def __repr__(self) -> str:
        return f"SQLiteNotes({self.path!r})"

    async def open(self) -> None:
        """Open the file (0600) and create the table."""
        async with self._lock:
            if self._db is None:
                self._db = await asyncio.to_thread(self._connect)

    def _connect(self) -> sqlite3.Connection:
        try:
            if self.path != ":memory:":
                os.close(os.open(self.path, os.O_CREAT | os.O_RDWR, 0o600))
            db = sqlite3.connect(
                self.path, timeout=self.busy_timeout, isolation_level=None, check_same_thread=False
            )
            db.execute("PRAGMA journal_mode=WAL")
            db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            raise StorageUnavailableError(
                f"the SQLite notes file {self.path!r} cannot be used ({exc}); check that its "
                "folder is writable"
            ) from exc
        return db

    async def close(self) -> None:
        """Close the file."""
        async with self._lock:
            db, self._db = self._db, None
            if db is not None:
                db.close()

    async def _run(self, sql: str, args: tuple[object, ...]) -> list[tuple[object, ...]]:
        if self._db is None:
            await self.open()
        db = self._db
        assert db is not None
        async with self._lock:
            try:
                return await asyncio.to_thread(lambda: db.execute(sql, args).fetchall())
            except sqlite3.Error as exc:
                raise StorageUnavailableError(
                    f"the SQLite notes file {self.path!r} cannot be used ({exc})"
                ) from exc

    async def put(
        self, scope: str, name: str, value: str, *, ttl: float | None = None, only_new: bool = False
    ) -> bool:
        """Store `value`; False if `only_new` and a live note is there."""
        now = time.time()
        expires = _FOREVER if ttl is None else now + ttl
        guard = "WHERE tether_notes.expires <= ?" if only_new else "WHERE ? = ?"
        extra = (now,) if only_new else (0, 0)
        rows = await self._run(
            "INSERT INTO tether_notes (scope, name, value, expires) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value, "
            f"expires = excluded.expires {guard} RETURNING 1",
            (scope, name, value, expires, *extra),
        )
        return bool(rows)

    async def get(self, scope: str, name: str) -> str | None:
        """The live note, or None."""
        rows = await self._run(
            "SELECT value FROM tether_notes WHERE scope = ? AND name = ? AND expires > ?",
            (scope, name, time.time()),
        )
        return str(rows[0][0]) if rows else None

    async def pop(self, scope: str, name: str) -> str | None:
        """Remove the note; return it if it was live."""
        rows = await self._run(
            "DELETE FROM tether_notes WHERE scope = ? AND name = ? RETURNING value, expires",
            (scope, name),
        )
        if not rows or float(str(rows[0][1])) <= time.time():
            return None
        return str(rows[0][0])


def notes_for(storage: object) -> NotesBase:
    """The notes that live next to `storage` (same SQLite folder, Redis, database)."""
    from tether.app.storage._postgres import PostgresStorage
    from tether.app.storage._redis import RedisStorage
    from tether.app.storage._sqlite import SQLiteStorage
    from tether.errors import ConfigError

    if isinstance(storage, SQLiteStorage):
        return SQLiteNotes(notes_path(storage.path), busy_timeout=storage.busy_timeout)
    if isinstance(storage, RedisStorage):
        from tether.app.storage._notes_redis import RedisNotes

        return RedisNotes(storage.address, key_prefix=f"{storage.key_prefix}:notes")
    if isinstance(storage, PostgresStorage):
        from tether.app.storage._notes_postgres import PostgresNotes

        return PostgresNotes(storage.dsn, schema=storage.schema, retry_for=storage.retry_for)
    raise ConfigError(
        f"no notes store is known for {type(storage).__name__}; pass `notes=` to `create_app`"
    )
