"""`PgPool`: the connection pool `PostgresStorage` and `PostgresEventLog` share the code of.

One `psycopg_pool.AsyncConnectionPool` per object, autocommit connections (each call is
one statement or one explicit transaction). `run` retries a call whose connection broke
(server restart, `pg_terminate_backend`, a network blip) with backoff for `retry_for`
seconds: every call it is given is safe to run again (a read, or a write whose landing
the call itself recognises: a write id, an expected version, an expected sequence
number). What still fails becomes `StorageUnavailableError`; a pool whose connections all
stayed in use becomes `StorageBusyError`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from tether.errors import (
    ConfigError,
    MissingDependencyError,
    StorageBusyError,
    StorageError,
    StorageUnavailableError,
)

if TYPE_CHECKING:
    from psycopg import AsyncConnection
    from psycopg_pool import AsyncConnectionPool

__all__ = ["PgPool", "check_schema_name", "safe_dsn"]

_T = TypeVar("_T")
_RETRY_STATES = ("08", "57P01", "57P02", "57P03", "40001", "40P01")
"""SQLSTATE prefixes worth another try: connection lost, server shutting down or
starting, serialization failure, deadlock."""
_FIRST_DELAY, _MAX_DELAY = 0.05, 1.0


def safe_dsn(dsn: str) -> str:
    """The DSN without its password, for error messages."""
    if "://" not in dsn:
        return " ".join(p for p in dsn.split() if not p.startswith("password="))
    parts = urlsplit(dsn)
    if parts.password is None:
        return dsn
    netloc = f"{parts.username or ''}:***@{parts.hostname}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))


def check_schema_name(schema: object) -> str | None:
    """A PostgreSQL schema name we can quote safely, or None (the search path decides)."""
    if schema is None:
        return None
    if (
        not isinstance(schema, str)
        or not schema
        or len(schema.encode()) > 63
        or not all(c.isalnum() or c == "_" for c in schema)
    ):
        raise ConfigError(
            f"schema must be 1-63 bytes of letters, digits and underscores, got {schema!r}"
        )
    return schema


def _check_options(pool_size: object, pool_timeout: object, retry_for: object) -> None:
    def seconds(value: object, low: float) -> bool:
        return (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and low <= value < float("inf")
        )

    checks = (
        (
            "pool_size",
            pool_size,
            isinstance(pool_size, int) and seconds(pool_size, 1),
            "an int >= 1",
        ),
        ("pool_timeout", pool_timeout, seconds(pool_timeout, 1e-9), "a positive number of seconds"),
        ("retry_for", retry_for, seconds(retry_for, 0), "a number of seconds >= 0"),
    )
    for name, value, ok, want in checks:
        if not ok:
            raise ConfigError(f"{name} must be {want}, got {value!r}")


class PgPool:
    """A pool of autocommit connections and the retrying `run` around it.

    Args:
        dsn: A libpq connection string or `postgresql://` URL.
        owner: Who uses the pool, for error messages (e.g. "PostgresStorage").
        pool_size: Connections opened at most.
        pool_timeout: Seconds a call waits for a free connection.
        retry_for: Seconds a call whose connection broke is retried for.
    """

    def __init__(
        self, dsn: str, owner: str, *, pool_size: int, pool_timeout: float, retry_for: float
    ) -> None:
        try:
            import psycopg
            import psycopg_pool
        except ImportError as exc:
            raise MissingDependencyError("psycopg", "postgres", owner) from exc
        if not isinstance(dsn, str) or not dsn:
            raise ConfigError(f"dsn must be a PostgreSQL URL or conninfo string, got {dsn!r}")
        _check_options(pool_size, pool_timeout, retry_for)
        try:
            psycopg.conninfo.conninfo_to_dict(dsn)
        except psycopg.ProgrammingError as exc:
            raise ConfigError(
                f"dsn {safe_dsn(dsn)!r} is not a valid PostgreSQL DSN: {exc}"
            ) from None
        self.dsn = dsn
        self.owner = owner
        self.pool_size = pool_size
        self.pool_timeout = pool_timeout
        self.retry_for = retry_for
        self._psycopg = psycopg
        self._pool_mod = psycopg_pool
        self._pool: AsyncConnectionPool[Any] | None = None

    @property
    def address(self) -> str:
        """The DSN without its password."""
        return safe_dsn(self.dsn)

    async def open(self, set_up: Callable[[AsyncConnection[Any]], Awaitable[None]]) -> None:
        """Open the pool and run `set_up` (schema, migrations) on one connection."""
        if self._pool is not None:
            return
        pool = self._pool_mod.AsyncConnectionPool(
            self.dsn,
            min_size=1,
            max_size=self.pool_size,
            timeout=self.pool_timeout,
            open=False,
            kwargs={"autocommit": True},
            name=self.owner,
        )
        try:
            await pool.open(wait=True, timeout=max(self.pool_timeout, self.retry_for, 1.0))
        except self._psycopg.Error as exc:
            await pool.close()
            raise self.unavailable(exc) from exc
        self._pool = pool
        try:
            await self.run(set_up)
        except BaseException:
            self._pool = None
            await pool.close()
            raise

    async def close(self) -> None:
        """Close every connection (idempotent)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    @property
    def is_open(self) -> bool:
        """Whether `open` ran and `close` did not since."""
        return self._pool is not None

    async def run(self, fn: Callable[[AsyncConnection[Any]], Awaitable[_T]]) -> _T:
        """Run `fn` on a pooled connection; retry it while its connection keeps breaking."""
        if self._pool is None:
            raise StorageUnavailableError(
                f"{self.owner} at {self.address} is closed; open it again before using it"
            )
        pool = self._pool
        start = time.monotonic()
        deadline = start + self.retry_for
        delay = _FIRST_DELAY
        while True:
            try:
                conn = await self._getconn(pool, start)
                try:
                    return await fn(conn)
                finally:
                    await pool.putconn(conn)
            except self._pool_mod.PoolTimeout as exc:
                raise self._busy_or_down(pool, exc) from exc
            except self._psycopg.Error as exc:
                if not self._retryable(exc):
                    if isinstance(exc, self._psycopg.OperationalError):
                        raise self.unavailable(exc) from exc
                    raise StorageError(
                        f"PostgreSQL at {self.address} refused a statement of {self.owner} "
                        f"({type(exc).__name__}: {exc}); nothing was written"
                    ) from exc
                if time.monotonic() + delay > deadline:
                    raise self.unavailable(exc, unknown=True) from exc
            await pool.check()  # drop the idle connections that died with this one
            await asyncio.sleep(delay)
            delay = min(delay * 2, _MAX_DELAY)

    async def _getconn(self, pool: AsyncConnectionPool[Any], start: float) -> Any:
        """A pooled connection, waited for while the pool is busy or cannot connect.

        Busy: up to `pool_timeout` s. Failing to connect (a server down is not a busy
        pool): up to `retry_for` s.

        Raises:
            PoolTimeout: no connection came in time.
        """
        errors = pool.get_stats().get("connections_errors", 0)
        step = _FIRST_DELAY
        while True:
            waited = time.monotonic() - start
            failing = pool.get_stats().get("connections_errors", 0) > errors
            left = (self.retry_for if failing else self.pool_timeout) - waited
            if left <= 0:
                raise self._pool_mod.PoolTimeout(
                    f"couldn't get a connection after {waited:.2f} sec"
                )
            try:
                return await pool.getconn(timeout=min(step, left))
            except self._pool_mod.PoolTimeout:
                step = min(step * 2, _MAX_DELAY)

    def _retryable(self, exc: BaseException) -> bool:
        state = getattr(exc, "sqlstate", None)
        if state is None:  # no SQLSTATE: the connection itself failed
            return isinstance(exc, self._psycopg.OperationalError | self._psycopg.InterfaceError)
        return str(state).startswith(_RETRY_STATES)

    def _busy_or_down(self, pool: AsyncConnectionPool[Any], exc: BaseException) -> StorageError:
        stats = pool.get_stats()
        if stats.get("pool_size", 0) >= self.pool_size and not stats.get("pool_available", 0):
            return StorageBusyError(
                f"all {self.pool_size} connections of {self.owner}'s pool to {self.address} "
                f"stayed in use for {self.pool_timeout:g} s; nothing was written: raise "
                "`pool_size` (and the server's `max_connections`), or lower this worker's load"
            )
        return self.unavailable(exc)

    def unavailable(self, exc: BaseException, *, unknown: bool = False) -> StorageUnavailableError:
        """The error for a server that cannot be used (after the retries, if any)."""
        outcome = (
            f"retried for {self.retry_for:g} s; a write in flight either landed whole or not "
            "at all: reload before writing again"
            if unknown
            else "nothing was written"
        )
        return StorageUnavailableError(
            f"PostgreSQL at {self.address} cannot be used by {self.owner} "
            f"({type(exc).__name__}: {str(exc).strip()}); check that the server is running "
            f"and the DSN is right; {outcome}"
        )
