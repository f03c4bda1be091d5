"""Session storage: `StorageBase`, `SQLiteStorage` (the default), Redis and PostgreSQL.

`RedisStorage` and `PostgresStorage` are for many workers. The service's event logs and
leases: `EventLogBase`, `SQLiteEventLog`, `RedisEventLog`, `PostgresEventLog`;
`storage_from_url` builds a storage from a URL, `event_log_for` the log next to it,
`notes_for` the shared notes (`NotesBase`: MCP tokens, answers) next to it.

`RedisStorage` imports `redis` only when constructed, `PostgresStorage` `psycopg`. The
names load on first use (module `__getattr__`, PEP 562): a chat on SQLite does not import
the Redis or PostgreSQL backends or the event logs.

It may import these private modules of other packages (and no others; the layering test
checks it):

- tether.state._fastload
- tether.state._json
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from tether import _lazy

if TYPE_CHECKING:
    from tether.app.storage._base import StorageBase, StorageCheckpoint
    from tether.app.storage._events import ActiveRun, EventLogBase, Lease, LogEntry, LogItem, LogKey
    from tether.app.storage._events_postgres import PostgresEventLog
    from tether.app.storage._events_redis import RedisEventLog
    from tether.app.storage._events_sqlite import SQLiteEventLog
    from tether.app.storage._notes import NotesBase, SQLiteNotes, notes_for
    from tether.app.storage._notes_postgres import PostgresNotes
    from tether.app.storage._notes_redis import RedisNotes
    from tether.app.storage._postgres import PostgresStorage
    from tether.app.storage._record import (
        SessionDelta,
        SessionInfo,
        SessionKey,
        SessionRecord,
        SessionUpsert,
        SessionVersion,
        StoredSession,
    )
    from tether.app.storage._redis import RedisStorage
    from tether.app.storage._sqlite import DEFAULT_SQLITE_PATH, SQLiteStorage
    from tether.app.storage._url import event_log_for, storage_from_url
    from tether.errors import SessionInputError

__all__ = [
    "DEFAULT_SQLITE_PATH",
    "ActiveRun",
    "EventLogBase",
    "Lease",
    "LogEntry",
    "LogItem",
    "LogKey",
    "NotesBase",
    "PostgresEventLog",
    "PostgresNotes",
    "PostgresStorage",
    "RedisEventLog",
    "RedisNotes",
    "RedisStorage",
    "SQLiteEventLog",
    "SQLiteNotes",
    "SQLiteStorage",
    "SessionDelta",
    "SessionInfo",
    "SessionInputError",
    "SessionKey",
    "SessionRecord",
    "SessionUpsert",
    "SessionVersion",
    "StorageBase",
    "StorageCheckpoint",
    "StoredSession",
    "event_log_for",
    "notes_for",
    "storage_from_url",
]

_HOMES = {
    "DEFAULT_SQLITE_PATH": "tether.app.storage._sqlite",
    "ActiveRun": "tether.app.storage._events",
    "EventLogBase": "tether.app.storage._events",
    "Lease": "tether.app.storage._events",
    "LogEntry": "tether.app.storage._events",
    "LogItem": "tether.app.storage._events",
    "LogKey": "tether.app.storage._events",
    "NotesBase": "tether.app.storage._notes",
    "PostgresEventLog": "tether.app.storage._events_postgres",
    "PostgresNotes": "tether.app.storage._notes_postgres",
    "RedisNotes": "tether.app.storage._notes_redis",
    "SQLiteNotes": "tether.app.storage._notes",
    "notes_for": "tether.app.storage._notes",
    "PostgresStorage": "tether.app.storage._postgres",
    "RedisEventLog": "tether.app.storage._events_redis",
    "RedisStorage": "tether.app.storage._redis",
    "SQLiteEventLog": "tether.app.storage._events_sqlite",
    "SQLiteStorage": "tether.app.storage._sqlite",
    "SessionDelta": "tether.app.storage._record",
    "SessionInfo": "tether.app.storage._record",
    "SessionInputError": "tether.errors",
    "SessionKey": "tether.app.storage._record",
    "SessionRecord": "tether.app.storage._record",
    "SessionUpsert": "tether.app.storage._record",
    "SessionVersion": "tether.app.storage._record",
    "StorageBase": "tether.app.storage._base",
    "StorageCheckpoint": "tether.app.storage._base",
    "StoredSession": "tether.app.storage._record",
    "event_log_for": "tether.app.storage._url",
    "storage_from_url": "tether.app.storage._url",
}
"""Where each name of `__all__` lives."""
_OWN_MODULE = set(_HOMES) - {
    "DEFAULT_SQLITE_PATH",
    "SessionInputError",
    "event_log_for",
    "notes_for",
    "storage_from_url",
}
"""Classes shown as `tether.app.storage.X` (the error lives in `tether.errors`)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = _lazy.load(__name__, name, home)
    if name in _OWN_MODULE:
        value.__module__ = __name__
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
