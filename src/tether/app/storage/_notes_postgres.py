"""`PostgresNotes`: notes in a `tether_notes` table."""

from __future__ import annotations

import time
from functools import partial
from typing import TYPE_CHECKING, Any

from tether.app.storage._notes import NotesBase
from tether.app.storage._postgres_pool import PgPool, check_schema_name
from tether.app.storage._postgres_schema import migrate, qualify

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["PostgresNotes"]

NOTES = (
    "CREATE TABLE IF NOT EXISTS {s}tether_notes (scope text NOT NULL, name text NOT NULL,"
    " value text NOT NULL, expires double precision NOT NULL, PRIMARY KEY (scope, name))",
)
"""The migrations of the notes table, in order."""

_PUT = (
    "INSERT INTO {s}tether_notes (scope, name, value, expires) VALUES (%s, %s, %s, %s)"
    " ON CONFLICT (scope, name) DO UPDATE SET value = excluded.value,"
    " expires = excluded.expires {guard} RETURNING 1"
)


class PostgresNotes(NotesBase):
    """Notes in PostgreSQL (the storage's database and schema)."""

    def __init__(self, dsn: str, *, schema: str | None = None, retry_for: float = 15.0) -> None:
        self.schema = check_schema_name(schema)
        self._pool = PgPool(
            dsn, "PostgresNotes", pool_size=4, pool_timeout=30.0, retry_for=retry_for
        )
        self._q = partial(qualify, schema=self.schema)

    def __repr__(self) -> str:
        return f"PostgresNotes({self._pool.address!r})"

    async def open(self) -> None:
        """Connect and create the table (idempotent)."""
        await self._pool.open(partial(migrate, schema=self.schema, component="notes", steps=NOTES))

    async def close(self) -> None:
        """Close the connections."""
        await self._pool.close()

    async def _rows(self, sql: str, args: tuple[object, ...]) -> list[tuple[Any, ...]]:
        if not self._pool.is_open:
            await self.open()
        query = self._q(sql).encode()

        async def run(conn: AsyncConnection[Any]) -> list[tuple[Any, ...]]:
            cur = await conn.execute(query, args)
            return await cur.fetchall() if cur.description else []

        return await self._pool.run(run)

    async def put(
        self, scope: str, name: str, value: str, *, ttl: float | None = None, only_new: bool = False
    ) -> bool:
        """Store `value`; False if `only_new` and a live note is there."""
        now = time.time()
        expires = float("inf") if ttl is None else now + ttl
        guard = "WHERE {s}tether_notes.expires <= %s" if only_new else ""
        args: tuple[object, ...] = (scope, name, value, expires, *((now,) if only_new else ()))
        return bool(await self._rows(_PUT.replace("{guard}", guard), args))

    async def get(self, scope: str, name: str) -> str | None:
        """The live note, or None."""
        rows = await self._rows(
            "SELECT value FROM {s}tether_notes WHERE scope = %s AND name = %s AND expires > %s",
            (scope, name, time.time()),
        )
        return str(rows[0][0]) if rows else None

    async def pop(self, scope: str, name: str) -> str | None:
        """Remove the note; return it if it was live."""
        rows = await self._rows(
            "DELETE FROM {s}tether_notes WHERE scope = %s AND name = %s RETURNING value, expires",
            (scope, name),
        )
        return str(rows[0][0]) if rows and float(rows[0][1]) > time.time() else None
