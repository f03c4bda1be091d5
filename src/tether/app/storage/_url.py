"""Storage URLs: `sqlite:///path.db`, `redis://host:port/db`, `postgresql://user@host/db`.

`storage_from_url` builds the storage a URL names (`StorageBase.from_url` is the same),
`event_log_for` the event log and leases that live next to a storage. `tether serve
--storage URL` uses both; `SCHEMES` maps each scheme to its builder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from tether.errors import ConfigError

if TYPE_CHECKING:
    from tether.app.storage._base import StorageBase
    from tether.app.storage._events import EventLogBase

__all__ = [
    "SCHEMES",
    "event_log_for",
    "events_path",
    "safe_url",
    "shared_by_workers",
    "storage_from_url",
]

DEFAULT_SQLITE = "./.tether/sessions.db"


def _sqlite(url: str, prefix: str) -> StorageBase:
    from tether.app.storage._sqlite import SQLiteStorage

    return SQLiteStorage(url.removeprefix("sqlite:///") or DEFAULT_SQLITE)


def _redis(url: str, prefix: str) -> StorageBase:
    from tether.app.storage._redis import RedisStorage

    return RedisStorage(url=url, key_prefix=prefix)


def _postgres(url: str, prefix: str) -> StorageBase:
    from tether.app.storage._postgres import PostgresStorage

    parts = urlsplit(url)
    query = parse_qsl(parts.query, keep_blank_values=True)
    schema = next((v for k, v in query if k == "schema"), None)
    rest = urlencode([(k, v) for k, v in query if k != "schema"])
    return PostgresStorage(urlunsplit(parts._replace(query=rest)), schema=schema)


SCHEMES: dict[str, Callable[[str, str], StorageBase]] = {
    "sqlite": _sqlite,
    "redis": _redis,
    "rediss": _redis,
    "postgresql": _postgres,
    "postgres": _postgres,
}
"""URL scheme → builder(url, key prefix) of the storage it names."""
_ONE_MACHINE = {"sqlite"}
"""Schemes whose storage one worker owns (a file: `--workers N` cannot share it)."""


def _scheme(url: object) -> str:
    return url.partition("://")[0].lower() if isinstance(url, str) and "://" in url else ""


def shared_by_workers(url: str) -> bool:
    """Whether several `tether serve` workers can share the storage `url` names."""
    scheme = _scheme(url)
    return scheme in SCHEMES and scheme not in _ONE_MACHINE


def storage_from_url(url: str, *, prefix: str = "tether") -> StorageBase:
    """The (unopened) storage a URL names.

    - `sqlite:///relative/path.db`, `sqlite:////absolute/path.db`
    - `redis://host:6379/0`, `rediss://...` (keys under `prefix`)
    - `postgresql://user:password@host:5432/db` (libpq parameters as query
      arguments; `?schema=name` puts the tables in that schema)

    Raises:
        ConfigError: the scheme is none of these.
    """
    scheme = _scheme(url)
    build = SCHEMES.get(scheme)
    if build is None or (scheme == "sqlite" and not url.startswith("sqlite:///")):
        raise ConfigError(
            "a storage URL must be sqlite:///path.db, redis://host:port/db or "
            f"postgresql://user@host:port/db, got {safe_url(str(url))!r}"
        )
    return build(url, prefix)


def events_path(sessions_path: str) -> str:
    """The event log's SQLite file next to the sessions' (`x.db` → `x.events.db`).

    A file of its own: two connections writing one file make SQLite's busy handler
    sleep, and a log append would wait behind a session save.
    """
    if sessions_path == ":memory:":
        return sessions_path
    path = Path(sessions_path)
    return str(path.with_name(f"{path.stem}.events{path.suffix or '.db'}"))


def event_log_for(storage: StorageBase) -> EventLogBase:
    """The event log that lives next to `storage` (same SQLite folder, Redis, database)."""
    from tether.app.storage._events_postgres import PostgresEventLog
    from tether.app.storage._events_redis import RedisEventLog
    from tether.app.storage._events_sqlite import SQLiteEventLog
    from tether.app.storage._postgres import PostgresStorage
    from tether.app.storage._redis import RedisStorage
    from tether.app.storage._sqlite import SQLiteStorage

    if isinstance(storage, SQLiteStorage):
        return SQLiteEventLog(events_path(storage.path), busy_timeout=storage.busy_timeout)
    if isinstance(storage, RedisStorage):
        return RedisEventLog(storage.address, key_prefix=f"{storage.key_prefix}:events")
    if isinstance(storage, PostgresStorage):
        return PostgresEventLog(storage.dsn, schema=storage.schema, retry_for=storage.retry_for)
    raise ConfigError(
        f"no event log is known for {type(storage).__name__}; pass `events=` to `create_app`"
    )


def safe_url(url: str) -> str:
    """The URL without a password."""
    if "@" in url:
        scheme, _, rest = url.partition("://")
        return f"{scheme}://***@{rest.split('@', 1)[1]}"
    return url
