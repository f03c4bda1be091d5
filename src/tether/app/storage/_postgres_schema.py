"""The tables of `PostgresStorage` and `PostgresEventLog`, and their migrations.

`tether_schema` holds one row per component ("sessions", "events") with the number of
migrations applied. Opening a storage applies the missing ones in one transaction, under
an advisory lock, so workers starting together migrate once. A database migrated by a
newer tether (more steps than this one knows) is refused, never written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether.errors import StorageError

if TYPE_CHECKING:
    from psycopg import AsyncConnection

__all__ = ["EVENTS", "SESSIONS", "migrate", "qualify"]

SESSIONS = (
    # 1: a row per session (head, counters, fence, last write id), a row per message.
    """
    CREATE TABLE {s}tether_sessions (
        sid bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        user_id text NOT NULL,
        agent_id text NOT NULL,
        session_id text NOT NULL,
        version bigint NOT NULL,
        head bytea NOT NULL,
        n integer NOT NULL,
        created_at timestamptz NOT NULL,
        updated_at timestamptz NOT NULL,
        metadata text NOT NULL,
        fence bigint NOT NULL DEFAULT 0,
        write_id text NOT NULL DEFAULT '',
        UNIQUE (user_id, agent_id, session_id)
    );
    CREATE TABLE {s}tether_messages (
        sid bigint NOT NULL,
        seq integer NOT NULL,
        body bytea NOT NULL,
        PRIMARY KEY (sid, seq)
    );
    """,
)
"""The sessions' migrations, in order (`{s}` is the schema prefix)."""

EVENTS = (
    # 1: a head per session log (agent, counters, the lease) and a row per event.
    """
    CREATE TABLE {s}tether_event_heads (
        user_id text NOT NULL,
        session_id text NOT NULL,
        agent_id text,
        last_seq bigint NOT NULL DEFAULT 0,
        token bigint NOT NULL DEFAULT 0,
        holder text NOT NULL DEFAULT '',
        reply_id text NOT NULL DEFAULT '',
        expires timestamptz NOT NULL DEFAULT '-infinity',
        interrupt boolean NOT NULL DEFAULT false,
        PRIMARY KEY (user_id, session_id)
    );
    CREATE TABLE {s}tether_events (
        user_id text NOT NULL,
        session_id text NOT NULL,
        seq bigint NOT NULL,
        type text NOT NULL,
        data text NOT NULL,
        PRIMARY KEY (user_id, session_id, seq)
    );
    """,
)
"""The event logs' migrations, in order."""


def qualify(sql: str, schema: str | None) -> str:
    """`sql` with `{s}` replaced by the quoted schema and a dot (nothing without a schema)."""
    return sql.replace("{s}", f'"{schema}".' if schema else "")


async def migrate(
    conn: AsyncConnection[Any], schema: str | None, component: str, steps: tuple[str, ...]
) -> None:
    """Create the schema and tables of `component`, or bring them up to `len(steps)`."""
    async with conn.transaction():
        lock = f"tether-schema:{schema or ''}"
        await conn.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (lock,))
        if schema:
            await conn.execute(f'CREATE SCHEMA IF NOT EXISTS "{schema}"')
        await conn.execute(
            qualify(
                "CREATE TABLE IF NOT EXISTS {s}tether_schema"
                " (component text PRIMARY KEY, version integer NOT NULL)",
                schema,
            )
        )
        cur = await conn.execute(
            qualify("SELECT version FROM {s}tether_schema WHERE component = %s", schema),
            (component,),
        )
        row = await cur.fetchone()
        done = 0 if row is None else int(row[0])
        if done > len(steps):
            raise StorageError(
                f"the {component} tables in PostgreSQL schema {schema or '(search path)'} are "
                f"at migration {done}, newer than this tether knows ({len(steps)}); upgrade "
                "tether, nothing was written"
            )
        for step in steps[done:]:
            await conn.execute(qualify(step, schema).encode())
        if done < len(steps):
            await conn.execute(
                qualify(
                    "INSERT INTO {s}tether_schema (component, version) VALUES (%s, %s)"
                    " ON CONFLICT (component) DO UPDATE SET version = excluded.version",
                    schema,
                ),
                (component, len(steps)),
            )
