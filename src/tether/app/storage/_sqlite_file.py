"""`SQLiteFile`: one SQLite file used from the event loop, with a thread for lock waits.

Shared by `SQLiteStorage` and `SQLiteEventLog`. Each call is one transaction on the event
loop's thread, on a connection that never waits (a WAL read never waits for a writer, and
a write with `synchronous=NORMAL` does no fsync). A write that finds the file locked by
another process runs again, whole, on the file's own thread, on a connection that waits
up to `busy_timeout`; that thread also runs the WAL checkpoints.
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

from tether.errors import StorageUnavailableError

__all__ = ["SQLiteFile"]

_T = TypeVar("_T")
_CHECKPOINT_EVERY = 200  # inline commits between two WAL checkpoints (on the thread)


class SQLiteFile:
    """The two connections to one file and the thread the waiting one runs on.

    Args:
        path: The database file (its directory is created), or `":memory:"`: one private
            connection, which no other process can lock.
        busy_timeout: Seconds the thread's connection waits for another process's lock.
        thread_name: The name prefix of the file's thread.
        unavailable: Turns a `sqlite3` or OS error into the caller's
            `StorageUnavailableError`.
    """

    def __init__(
        self,
        path: str,
        busy_timeout: float,
        thread_name: str,
        unavailable: Callable[[BaseException], StorageUnavailableError],
    ) -> None:
        self.path = path
        self.busy_timeout = busy_timeout
        self.thread_name = thread_name
        self._unavailable = unavailable
        self._db: sqlite3.Connection | None = None  # on the loop: never waits for a lock
        self._waiter: sqlite3.Connection | None = None  # on the thread: waits for locks
        self._pool: ThreadPoolExecutor | None = None
        self._commits = 0  # inline commits since the last WAL checkpoint

    @property
    def is_open(self) -> bool:
        """Whether `open` ran and `close` did not since."""
        return self._db is not None

    async def open(self, setup: Callable[[sqlite3.Connection], None]) -> None:
        """Connect; `setup` (WAL mode, tables) runs once, on the thread's connection."""
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=self.thread_name)
        loop = asyncio.get_running_loop()
        try:
            waiter = await loop.run_in_executor(pool, self._connect_waiter, setup)
            db = waiter if self.path == ":memory:" else _connect(self.path, 0.0)
        except BaseException as exc:
            pool.shutdown(wait=False)  # no thread outlives a failed open
            if isinstance(exc, OSError | sqlite3.Error):
                raise self._unavailable(exc) from exc
            raise
        if db is not waiter:
            db.execute("PRAGMA wal_autocheckpoint = 0")  # checkpoints run on the thread
        self._db, self._waiter, self._pool = db, waiter, pool

    def _connect_waiter(self, setup: Callable[[sqlite3.Connection], None]) -> sqlite3.Connection:
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        db = _connect(self.path, self.busy_timeout)
        try:
            setup(db)
        except BaseException:
            db.close()
            raise
        return db

    async def close(self) -> None:
        """Close both connections, after the transaction in flight on the thread, if any."""
        db, waiter, pool = self._db, self._waiter, self._pool
        self._db, self._waiter, self._pool = None, None, None
        if db is not None and db is not waiter:
            db.close()
        if pool is not None:
            if waiter is not None:
                await asyncio.get_running_loop().run_in_executor(pool, waiter.close)
            pool.shutdown(wait=False)

    async def run(self, fn: Callable[[sqlite3.Connection], _T], *, write: bool) -> _T:
        """Run `fn` in one transaction (here, or on the thread if the file is locked).

        On the thread the whole transaction runs there, so a caller cancelled while it
        waits leaves it to commit or roll back, before the next call starts.
        """
        db, waiter, pool = self._db, self._waiter, self._pool
        if db is None or waiter is None or pool is None:
            raise StorageUnavailableError(f"{self.path!r} is closed; open it again first")
        try:
            result = _transact(db, fn, write)
        except sqlite3.OperationalError as exc:
            if db is waiter or not _is_locked(exc):
                raise self._unavailable(exc) from exc
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc
        else:
            if write and db is not waiter:
                self._commits += 1
                if self._commits >= _CHECKPOINT_EVERY:
                    self._commits = 0
                    pool.submit(_checkpoint, waiter)  # not awaited: the next one retries
            return result
        try:  # another process holds the lock: wait for it on the thread
            return await asyncio.get_running_loop().run_in_executor(
                pool, _transact, waiter, fn, write
            )
        except sqlite3.Error as exc:
            raise self._unavailable(exc) from exc


def _connect(path: str, timeout: float) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None, check_same_thread=False, timeout=timeout)
    db.execute("PRAGMA synchronous = NORMAL")
    return db


def _transact(db: sqlite3.Connection, fn: Callable[[sqlite3.Connection], _T], write: bool) -> _T:
    """`fn(db)` in one transaction (`BEGIN IMMEDIATE` for a write), rolled back if it raises."""
    db.execute("BEGIN IMMEDIATE" if write else "BEGIN")
    try:
        result = fn(db)
    except BaseException:
        _rollback(db)
        raise
    db.execute("COMMIT")
    return result


def _is_locked(exc: sqlite3.OperationalError) -> bool:
    text = str(exc)
    return "locked" in text or "busy" in text


def _checkpoint(db: sqlite3.Connection) -> None:
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)")
    except sqlite3.Error:
        pass  # busy or closing: the next checkpoint catches up


def _rollback(db: sqlite3.Connection) -> None:
    try:
        db.execute("ROLLBACK")
    except sqlite3.Error:
        pass  # no transaction is open: it failed to begin, or it committed
