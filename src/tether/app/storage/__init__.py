"""Session storage: `StorageBase`, `SQLiteStorage` (the embedded default), `RedisStorage`.

Also the service's event logs and leases: `EventLogBase`, `SQLiteEventLog`, `RedisEventLog`.

`RedisStorage` imports `redis` only when constructed.
"""

from tether.app.storage._base import StorageBase
from tether.app.storage._events import ActiveRun, EventLogBase, Lease, LogEntry, LogItem, LogKey
from tether.app.storage._events_redis import RedisEventLog
from tether.app.storage._events_sqlite import SQLiteEventLog
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
from tether.errors import SessionInputError

__all__ = [
    "DEFAULT_SQLITE_PATH",
    "ActiveRun",
    "EventLogBase",
    "Lease",
    "LogEntry",
    "LogItem",
    "LogKey",
    "RedisEventLog",
    "RedisStorage",
    "SQLiteEventLog",
    "SQLiteStorage",
    "SessionDelta",
    "SessionInfo",
    "SessionInputError",
    "SessionKey",
    "SessionRecord",
    "SessionUpsert",
    "SessionVersion",
    "StorageBase",
    "StoredSession",
]

for _name in __all__:
    if _name not in ("DEFAULT_SQLITE_PATH", "SessionInputError"):  # the error lives in errors
        globals()[_name].__module__ = __name__
del _name
