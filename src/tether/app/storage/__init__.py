"""Session storage: `StorageBase`, `SQLiteStorage` (the embedded default), `RedisStorage`.

`RedisStorage` imports `redis` only when constructed.
"""

from tether.app.storage._base import StorageBase
from tether.app.storage._record import (
    SessionDelta,
    SessionInfo,
    SessionKey,
    SessionRecord,
    SessionUpsert,
    StoredSession,
)
from tether.app.storage._redis import RedisStorage
from tether.app.storage._sqlite import DEFAULT_SQLITE_PATH, SQLiteStorage
from tether.errors import SessionInputError

__all__ = [
    "DEFAULT_SQLITE_PATH",
    "RedisStorage",
    "SQLiteStorage",
    "SessionDelta",
    "SessionInfo",
    "SessionInputError",
    "SessionKey",
    "SessionRecord",
    "SessionUpsert",
    "StorageBase",
    "StoredSession",
]

for _name in __all__:
    if _name not in ("DEFAULT_SQLITE_PATH", "SessionInputError"):  # the error lives in errors
        globals()[_name].__module__ = __name__
del _name
