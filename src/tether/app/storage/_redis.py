"""`RedisStorage`: sessions in Redis for many stateless workers (`redis.asyncio`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote, urlsplit, urlunsplit

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
from tether.app.storage._redis_lua import APPLY, DELETE, FENCE, FETCH, PRUNE, UPSERT
from tether.errors import (
    ConfigError,
    MissingDependencyError,
    SessionCorruptedError,
    StorageError,
    StorageUnavailableError,
)

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisStorage"]

_T = TypeVar("_T")
_UNAVAILABLE_REPLIES = ("READONLY", "MISCONF", "LOADING", "OOM", "MASTERDOWN", "BUSY")


def _enc(part: str) -> str:
    """Escape the characters that structure a key, so distinct ids give distinct keys."""
    return quote(part, safe="")


class RedisStorage(StorageBase):
    """Sessions in Redis: atomic versioned writes (Lua), an append-only message log.

    Keys include all three ids: `<key_prefix>:{<user_id>}:<agent_id>:<session_id>`
    (a hash with the version and the state's head) and `...:msgs` (a list, one JSON
    message per entry); ids are percent-encoded so that no two sessions share a key.
    Run Redis with AOF (`appendonly yes`) if sessions must survive a restart.

    Args:
        host: Redis host (ignored when `url` is given).
        port: Redis port.
        db: Database number.
        password: Password, if the server needs one.
        url: A `redis://` or `rediss://` URL; takes precedence over host/port/db/password.
        key_prefix: Prefix of every key this storage writes.
        ttl: Seconds a session lives after its last write; None keeps sessions forever.
        socket_timeout: Seconds to wait for Redis before raising `StorageUnavailableError`.
        max_connections: Connections this storage opens at most; more concurrent calls
            wait for a free one.
    """

    def __init__(
        self,
        host: str = "localhost",
        port: int = 6379,
        db: int = 0,
        password: str | None = None,
        url: str | None = None,
        key_prefix: str = "tether",
        ttl: int | None = None,
        *,
        socket_timeout: float = 5.0,
        max_connections: int = 100,
    ) -> None:
        super().__init__()
        try:
            import redis.asyncio as aioredis
            from redis.asyncio.retry import Retry
            from redis.backoff import NoBackoff
        except ImportError as exc:
            raise MissingDependencyError("redis", "redis", "RedisStorage") from exc
        _check_options(key_prefix, ttl, port, db, socket_timeout, max_connections)
        options: dict[str, Any] = {
            "socket_timeout": socket_timeout,
            "socket_connect_timeout": socket_timeout,
            "retry": Retry(NoBackoff(), 0),  # we retry once ourselves, idempotently
            "max_connections": max_connections,
            "timeout": None,  # wait for a free connection; each command has its own timeout
        }
        pools = aioredis.BlockingConnectionPool
        if url is not None:
            self.address = _safe_url(url)
            pool = pools.from_url(url, **options)
        else:
            self.address = f"redis://{host}:{port}/{db}"
            pool = pools(host=host, port=port, db=db, password=password, **options)
        self._client: Redis = aioredis.Redis(connection_pool=pool)
        self.key_prefix = key_prefix
        self.ttl = ttl
        self._errors = (aioredis.ConnectionError, aioredis.TimeoutError)
        self._response_error = aioredis.ResponseError
        self._redis_error = aioredis.RedisError
        self._fetch_script = self._client.register_script(FETCH)
        self._apply_script = self._client.register_script(APPLY)
        self._upsert_script = self._client.register_script(UPSERT)
        self._delete_script = self._client.register_script(DELETE)
        self._prune_script = self._client.register_script(PRUNE)
        self._fence_script = self._client.register_script(FENCE)

    def __repr__(self) -> str:
        return f"RedisStorage({self.address!r}, key_prefix={self.key_prefix!r})"

    def keys_of(self, key: SessionKey) -> tuple[str, str, str]:
        """The (head, message log, user index) keys of a session."""
        user = self._user_prefix(key.user_id)
        head = f"{user}:{_enc(key.agent_id)}:{_enc(key.session_id)}"
        return head, f"{head}:msgs", f"{user}:sessions"

    def _user_prefix(self, user_id: str) -> str:
        return f"{self.key_prefix}:{{{_enc(user_id)}}}"

    def _where(self, key: SessionKey) -> str:
        return f"Redis {self.address} key {self.keys_of(key)[0]!r}"

    async def _open(self) -> None:
        await self._call(None, self._client.ping)

    async def _close(self) -> None:
        await self._client.aclose(close_connection_pool=True)

    async def _call(self, target: SessionKey | str | None, fn: Callable[[], Awaitable[_T]]) -> _T:
        """Run `fn`, retrying once on a fresh connection; map Redis errors to ours.

        `target` is the session (or the raw key) the call is about, for error messages.
        """
        for attempt in (1, 2):
            try:
                return await fn()
            except self._errors as exc:
                if attempt == 2:
                    raise self._unavailable(exc) from exc
                # Idle pooled connections may all be dead (Redis restarted): drop them.
                await self._client.connection_pool.disconnect(inuse_connections=False)
            except self._response_error as exc:
                raise self._response(target, exc) from exc
            except self._redis_error as exc:  # e.g. the port serves another protocol
                why = "what answers there is not a Redis server: check the host and port"
                raise self._unavailable(exc, why) from exc
        raise AssertionError("unreachable")  # pragma: no cover

    def _unavailable(
        self,
        exc: BaseException,
        why: str = "check that the server is running and the address is right, then retry",
    ) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"Redis at {self.address} cannot be used ({type(exc).__name__}: {exc}); {why}; "
            "no session was half-written"
        )

    def _response(self, target: SessionKey | str | None, exc: BaseException) -> StorageError:
        text = str(exc)
        if text.startswith(_UNAVAILABLE_REPLIES):
            return self._unavailable(exc)
        if "WRONGTYPE" in text:
            named = None  # our scripts say "WRONGTYPE <key> holds a <type>, not a <type>"
            if text.startswith("WRONGTYPE ") and " holds a " in text:
                named = text.removeprefix("WRONGTYPE ").rsplit(" holds a ", 1)[0]
            if isinstance(target, SessionKey) and named != self.keys_of(target)[2]:
                return SessionCorruptedError(
                    f"session {target} at {self._where(target)} holds a value of the wrong "
                    "Redis type; other sessions are unaffected: delete it with "
                    "`delete_session`"
                )
            if target is not None:
                index = named or (target if isinstance(target, str) else "")
                return SessionCorruptedError(
                    f"the user's sessions index {index!r} at Redis {self.address} holds a "
                    f"value of the wrong Redis type ({text}); nothing was written: delete "
                    "that key (`DEL`) and sessions reappear in `list_sessions` when next saved"
                )
        return StorageError(f"Redis at {self.address} refused the command: {text}")

    async def _fetch(self, key: SessionKey) -> StoredSession | None:
        keys = self.keys_of(key)
        reply = await self._call(key, lambda: self._fetch_script(keys=keys[:2]))
        return self._decode(key, reply) if reply else None

    def _decode(self, key: SessionKey, reply: list[Any]) -> StoredSession:
        where = self._where(key)
        version, head, n, created, updated, meta, *bodies = reply
        if head is None or created is None or updated is None or meta is None:
            raise SessionCorruptedError(
                f"session {key} at {where} is missing fields; other sessions are unaffected: "
                "delete it with `delete_session`"
            )
        count = _count(key, where, "message count", n)
        if count != len(bodies):
            raise SessionCorruptedError(
                f"session {key} at {where} should hold {count} messages but holds "
                f"{len(bodies)}; delete it with `delete_session` or restore it from a backup"
            )
        return StoredSession(
            version=_count(key, where, "version", version),
            head=head,
            bodies=bodies,
            created_at=parse_time(key, where, created),
            updated_at=parse_time(key, where, updated),
            metadata=decode_metadata(key, where, meta),
        )

    async def _upsert(self, key: SessionKey, write: SessionUpsert) -> StoredSession:
        keys = self.keys_of(key)
        args = [
            write.write_id,
            "1" if write.replace else "0",
            write.head,
            write.now.isoformat(),
            self.ttl or 0,
            write.metadata if write.metadata is not None else "",
            _member(key),
            *write.bodies,
        ]
        reply = await self._call(key, lambda: self._upsert_script(keys=keys, args=args))
        return self._decode(key, reply)

    async def _apply(self, key: SessionKey, delta: SessionDelta) -> int:
        keys = self.keys_of(key)
        args: list[Any] = [
            delta.write_id,
            delta.expected_version,
            delta.head,
            delta.base_count,
            delta.count,
            time_text(delta.now),
            self.ttl or 0,
            len(delta.changed),
            delta.created_at.isoformat(),
            "" if delta.fence is None else delta.fence,
        ]
        for position, body in delta.changed:
            args += (position, body)
        args += delta.appended
        reply = await self._call(key, lambda: self._apply_script(keys=keys, args=args))
        code = int(reply[0])
        if code == -1:
            raise not_found(key)
        if code == -2:
            raise conflict(key, delta.expected_version, int(reply[1]))
        if code == -4:
            raise recreated(key)
        if code == -5:
            raise fenced(key, delta.fence or 0, int(reply[1]))
        if code == -3:
            raise SessionCorruptedError(
                f"session {key} at {self._where(key)}: its message log does not match its "
                "head; other sessions are unaffected: delete it with `delete_session`"
            )
        return code

    async def _fence(self, key: SessionKey, token: int) -> SessionVersion | None:
        head = self.keys_of(key)[0]
        reply = await self._call(key, lambda: self._fence_script(keys=[head], args=[token]))
        code = int(reply[0])
        if code == -1:
            return None
        if code == -5:
            raise fenced(key, token, int(reply[1]))
        return SessionVersion(code, parse_time(key, self._where(key), reply[1] or b""))

    async def _remove(self, key: SessionKey) -> bool:
        keys = self.keys_of(key)
        member = _member(key)
        reply = await self._call(key, lambda: self._delete_script(keys=keys, args=[member]))
        return bool(reply)

    async def _scan(self, user_id: str, agent_id: str | None) -> list[SessionInfo]:
        index = f"{self._user_prefix(user_id)}:sessions"
        members: set[bytes | str] = await self._call(index, lambda: self._client.smembers(index))
        keys = [_key_of(user_id, m.decode() if isinstance(m, bytes) else m) for m in members]
        if agent_id is not None:
            keys = [k for k in keys if k.agent_id == agent_id]

        async def heads() -> list[Any]:
            async with self._client.pipeline(transaction=False) as pipe:
                for k in keys:
                    pipe.hmget(
                        self.keys_of(k)[0], "version", "created_at", "updated_at", "metadata", "n"
                    )
                return await pipe.execute(raise_on_error=False)

        rows = await self._call(index, heads)
        infos, gone = [], []
        for k, row in zip(keys, rows, strict=True):
            if not isinstance(row, Exception) and row[0] is None:
                gone.append(k)  # expired (ttl) or deleted meanwhile
                continue
            info = listed(k, partial(self._listed, k, row))
            if info is not None:
                infos.append(info)
        if gone:
            heads_gone = [self.keys_of(k)[0] for k in gone]
            members_gone = [_member(k) for k in gone]
            await self._call(
                index, lambda: self._prune_script(keys=[index, *heads_gone], args=members_gone)
            )
        return infos

    def _listed(self, key: SessionKey, row: Any) -> SessionInfo:
        """A session's listing from its `HMGET` reply (an error for a wrong-type key)."""
        if isinstance(row, Exception):
            raise self._response(key, row) from row
        return self._info(key, *row)

    def _info(
        self, key: SessionKey, version: Any, created: Any, updated: Any, meta: Any, n: Any
    ) -> SessionInfo:
        where = self._where(key)
        return SessionInfo(
            user_id=key.user_id,
            agent_id=key.agent_id,
            session_id=key.session_id,
            version=_count(key, where, "version", version),
            created_at=parse_time(key, where, created or b""),
            updated_at=parse_time(key, where, updated or b""),
            metadata=decode_metadata(key, where, meta or b""),
            message_count=_count(key, where, "message count", n),
        )


def _count(key: SessionKey, where: str, name: str, raw: Any) -> int:
    """A stored version or message count; anything but a non-negative integer is corruption."""
    try:
        value = int(raw)
    except (TypeError, ValueError):
        value = -1
    if value < 0:
        raise SessionCorruptedError(
            f"session {key} at {where} has {name} {raw!r}, not a count; other sessions are "
            "unaffected: delete it with `delete_session` or restore it from a backup"
        )
    return value


def _check_options(
    key_prefix: object,
    ttl: object,
    port: object,
    db: object,
    socket_timeout: object,
    max_connections: object,
) -> None:
    if not isinstance(key_prefix, str) or not key_prefix or "{" in key_prefix or "}" in key_prefix:
        raise ConfigError(
            f"key_prefix must be a non-empty string without braces, got {key_prefix!r}"
        )
    checks = [
        ("ttl", ttl, ttl is None or _is_int(ttl, 1), "a positive number of seconds or None"),
        ("port", port, _is_int(port, 1, 65535), "an int from 1 to 65535"),
        ("db", db, _is_int(db, 0), "an int >= 0"),
        ("max_connections", max_connections, _is_int(max_connections, 1), "an int >= 1"),
        (
            "socket_timeout",
            socket_timeout,
            isinstance(socket_timeout, int | float)
            and not isinstance(socket_timeout, bool)
            and 0 < socket_timeout < float("inf"),
            "a positive number of seconds",
        ),
    ]
    for name, value, ok, want in checks:
        if not ok:
            raise ConfigError(f"{name} must be {want}, got {value!r}")


def _is_int(value: object, minimum: int, maximum: float = float("inf")) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and minimum <= value <= maximum


def _member(key: SessionKey) -> str:
    return f"{_enc(key.agent_id)}:{_enc(key.session_id)}"


def _key_of(user_id: str, member: str) -> SessionKey:
    agent, _, session = member.partition(":")
    return SessionKey(user_id, unquote(agent), unquote(session))


def _safe_url(url: str) -> str:
    """The URL without its password, for error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = f"{parts.username or ''}:***@{parts.hostname}"
    if parts.port is not None:
        netloc += f":{parts.port}"
    return urlunsplit(parts._replace(netloc=netloc))
