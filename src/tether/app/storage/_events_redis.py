"""`RedisEventLog`: event logs as Redis Streams, leases as expiring hashes (Lua-checked).

Keys of one session share a hash tag, `<prefix>:{<user>:<session>}:`, so each script
touches one slot: `head` (agent, last sequence number, last token), `lease` (token,
reply id, interrupt flag; expires), `log` (a stream whose entry ids are `<seq>-1`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tether.app.storage._events import (
    ActiveRun,
    EventLogBase,
    Lease,
    LogEntry,
    LogItem,
    LogKey,
    RecentEntries,
    busy,
)
from tether.errors import LeaseLostError, MissingDependencyError, StorageUnavailableError

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisEventLog"]

_CHECK = """
if redis.call('HGET', KEYS[2], 'token') ~= ARGV[1] then return redis.error_reply('LEASE') end
"""
_ACQUIRE = """
if redis.call('EXISTS', KEYS[2]) == 1 then
  return {0, redis.call('HGET', KEYS[2], 'reply') or ''}
end
local token = redis.call('HINCRBY', KEYS[1], 'token', 1)
redis.call('HSET', KEYS[2], 'token', token, 'reply', '', 'interrupt', 0)
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return {1, token, redis.call('HGET', KEYS[1], 'seq') or '0'}
"""
# ARGV: token, then (reply_id, type, data) per item from ARGV[3] on.
_WRITE = """
local seq = tonumber(redis.call('HGET', KEYS[1], 'seq') or '0')
if #ARGV >= 3 then
  for i = 3, #ARGV, 3 do
    seq = seq + 1
    redis.call('XADD', KEYS[3], seq .. '-1', 't', ARGV[i + 1], 'd', ARGV[i + 2])
  end
  redis.call('HSET', KEYS[1], 'seq', seq)
  redis.call('HSET', KEYS[2], 'reply', ARGV[#ARGV - 2])
end
"""
# ARGV: token, ttl (ms), items...
_RENEW = (
    _CHECK
    + _WRITE
    + """
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return {redis.call('HGET', KEYS[2], 'interrupt'), seq}
"""
)
_APPEND = _CHECK + _WRITE + "return seq"
_RELEASE = (
    """
if redis.call('HGET', KEYS[2], 'token') ~= ARGV[1] then return {0} end
"""
    + _WRITE
    + """
redis.call('DEL', KEYS[2])
return {1, seq}
"""
)
_INTERRUPT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return false end
redis.call('HSET', KEYS[1], 'interrupt', 1)
return {redis.call('HGET', KEYS[1], 'token'), redis.call('HGET', KEYS[1], 'reply')}
"""
_DELETE = """
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HDEL', KEYS[1], 'agent')
"""


class RedisEventLog(EventLogBase):
    """Event logs and leases in Redis, for many workers.

    Args:
        url: A `redis://` URL (the same server as the `RedisStorage`).
        key_prefix: Prefix of every key this log writes.
        block: Seconds one blocking read waits before the follower looks at the lease.
    """

    def __init__(self, url: str, *, key_prefix: str = "tether", block: float = 1.0) -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:
            raise MissingDependencyError("redis", "redis", "RedisEventLog") from exc
        self.key_prefix = key_prefix
        self.block = block
        options: dict[str, Any] = {
            "socket_timeout": 5.0 + block,
            "socket_connect_timeout": 5.0,
            "decode_responses": True,
        }
        pool = aioredis.BlockingConnectionPool.from_url(url, max_connections=2000, **options)
        self._client: Redis = aioredis.Redis(connection_pool=pool)
        self._errors = (aioredis.ConnectionError, aioredis.TimeoutError)
        self._response_error = aioredis.ResponseError
        self._signals: dict[LogKey, asyncio.Event] = {}
        self._last: dict[LogKey, int] = {}  # last seq this process wrote, per session
        self._held: dict[LogKey, int] = {}  # leases this process holds: key -> token
        # The entries this process appended per session under its lease, contiguous: reads
        # of a run this process holds need no round trip to Redis.
        self._recent = RecentEntries()
        self._scripts = {
            name: self._client.register_script(src)
            for name, src in (
                ("acquire", _ACQUIRE),
                ("renew", _RENEW),
                ("append", _APPEND),
                ("release", _RELEASE),
                ("interrupt", _INTERRUPT),
                ("delete", _DELETE),
            )
        }

    def __repr__(self) -> str:
        return f"RedisEventLog(key_prefix={self.key_prefix!r})"

    def keys(self, key: LogKey) -> tuple[str, str, str]:
        """The (head, lease, log) keys of a session."""
        base = (
            f"{self.key_prefix}:{{{quote(key.user_id, safe='')}:{quote(key.session_id, safe='')}}}"
        )
        return f"{base}:head", f"{base}:lease", f"{base}:log"

    async def _call(self, name: str, keys: tuple[str, ...], *args: str | int) -> Any:
        try:
            return await self._scripts[name](keys=list(keys), args=list(args))
        except self._response_error as exc:
            if "LEASE" in str(exc):
                raise LeaseLostError(
                    "the lease on this session was taken over by another worker (or the "
                    "session was deleted); this run stops without writing"
                ) from None
            raise self._down(exc) from exc
        except self._errors as exc:
            raise self._down(exc) from exc

    def _down(self, exc: BaseException) -> StorageUnavailableError:
        return StorageUnavailableError(
            f"the Redis event log cannot be used ({exc}); check that Redis is running"
        )

    async def open(self) -> None:
        """Check the server answers."""
        await self.ping()

    async def close(self) -> None:
        """Close the connections."""
        await self._client.aclose(close_connection_pool=True)

    async def ping(self) -> None:
        """Raise `StorageUnavailableError` unless Redis answers."""
        try:
            await self._client.ping()
        except self._errors as exc:
            raise self._down(exc) from exc

    async def bind(self, key: LogKey, agent_id: str) -> str:
        """Record the session's agent (an existing binding wins)."""
        head = self.keys(key)[0]
        try:
            await self._client.hsetnx(head, "agent", agent_id)
            return str(await self._client.hget(head, "agent"))
        except self._errors as exc:
            raise self._down(exc) from exc

    async def agent_of(self, key: LogKey) -> str | None:
        """The session's agent, if bound."""
        try:
            value = await self._client.hget(self.keys(key)[0], "agent")
        except self._errors as exc:
            raise self._down(exc) from exc
        return None if value is None else str(value)

    async def acquire(self, key: LogKey, ttl: float) -> Lease:
        """Take the lease, or raise `ReplyInProgressError`."""
        got = await self._call("acquire", self.keys(key), _ms(ttl))
        if int(got[0]) == 0:
            raise busy(str(got[1]))
        lease = Lease(key=key, token=int(got[1]), start_seq=int(got[2]))
        self._held[key] = lease.token
        self._recent.start(key, lease.start_seq)
        return lease

    def _signal(self, key: LogKey, seq: int | None) -> None:
        """Wake this process's followers of the session (they need no blocking read)."""
        if seq is not None:
            self._last[key] = max(seq, self._last.get(key, 0))
        event = self._signals.pop(key, None)
        if event is not None:
            event.set()

    async def renew(self, lease: Lease, ttl: float, items: Sequence[LogItem] = ()) -> bool:
        """Append `items`, extend the lease; whether an interrupt was asked for."""
        keys = self.keys(lease.key)
        got = await self._call("renew", keys, lease.token, _ms(ttl), *_flat(items))
        if items:
            self._recent.remember(lease.key, int(got[1]), items)
            self._signal(lease.key, int(got[1]))
        return str(got[0]) == "1"

    async def append(self, lease: Lease, items: Sequence[LogItem]) -> int:
        """Append events if the lease is still ours."""
        seq = int(await self._call("append", self.keys(lease.key), lease.token, "", *_flat(items)))
        self._recent.remember(lease.key, seq, items)
        self._signal(lease.key, seq)
        return seq

    async def release(
        self, lease: Lease, items: Sequence[LogItem] = (), *, mark_end: bool = True
    ) -> None:
        """Log `items` and the end marker, give the lease back."""
        end = [LogItem("", "", str(lease.token))] if mark_end else []
        logged = [*items, *end]
        try:
            got = await self._call("release", self.keys(lease.key), lease.token, "", *_flat(logged))
            if int(got[0]) == 1:
                self._recent.remember(lease.key, int(got[1]), logged)
        finally:
            if self._held.get(lease.key) == lease.token:
                del self._held[lease.key]
            self._last.pop(lease.key, None)
            self._signal(lease.key, None)  # followers here read the tail from Redis

    def holds(self, key: LogKey) -> bool:
        """Whether this log holds the session's lease (taken here, not released yet)."""
        return key in self._held

    async def active(self, key: LogKey) -> ActiveRun | None:
        """The run holding the lease, if any (an expired lease is gone)."""
        try:
            fields = await self._client.hgetall(self.keys(key)[1])
        except self._errors as exc:
            raise self._down(exc) from exc
        if not fields or "token" not in fields:
            return None
        return ActiveRun(
            token=int(fields["token"]),
            reply_id=str(fields.get("reply", "")),
            interrupt=fields.get("interrupt") == "1",
        )

    async def request_interrupt(self, key: LogKey) -> ActiveRun | None:
        """Flag the active run to stop."""
        lease = self.keys(key)[1]
        got = await self._call("interrupt", (lease,))
        if not got:
            return None
        return ActiveRun(token=int(got[0]), reply_id=str(got[1] or ""), interrupt=True)

    async def read(self, key: LogKey, after: int, limit: int = 500) -> list[LogEntry]:
        """Entries above `after`, in order.

        While this process holds the session's lease, it is the log's only writer: what
        it appended since it took the lease is the log's tail, read here without Redis.
        """
        local = self._recent.read(key, after, limit) if key in self._held else None
        if local is not None:
            return local
        try:
            rows: Any = await self._client.xrange(self.keys(key)[2], f"{after + 1}-0", "+", limit)
        except self._errors as exc:
            raise self._down(exc) from exc
        return [_entry(entry_id, fields) for entry_id, fields in rows]

    async def last_seq(self, key: LogKey) -> int:
        """The sequence number of the last entry (0 if none)."""
        try:
            value = await self._client.hget(self.keys(key)[0], "seq")
        except self._errors as exc:
            raise self._down(exc) from exc
        return int(value or 0)

    async def wait(self, key: LogKey, after: int, seconds: float) -> bool:
        """Wait until an entry above `after` may exist (or the timeout).

        While this process holds the session's lease, only it appends: its followers wait
        on its own signal. Otherwise they block on the stream in Redis.
        """
        if key in self._held:
            signal = self._signals.setdefault(key, asyncio.Event())
            if self._last.get(key, 0) > after:
                return True
            try:
                async with asyncio.timeout(min(seconds, self.block)):
                    await signal.wait()  # (`asyncio.timeout`: no task per wait, as `wait_for`)
                return True
            except TimeoutError:
                return False
        ms = max(1, int(min(seconds, self.block) * 1000))
        try:
            got = await self._client.xread({self.keys(key)[2]: f"{after}-1"}, count=1, block=ms)
        except self._errors as exc:
            raise self._down(exc) from exc
        return bool(got)

    async def delete(self, key: LogKey) -> None:
        """Remove the log, lease and binding (the counters stay, see `SQLiteEventLog`)."""
        self._recent.forget(key)
        await self._call("delete", self.keys(key))

    async def clear_prefix(self) -> None:
        """Delete every key under this log's prefix (for tests and benchmarks)."""
        async for name in self._client.scan_iter(match=f"{self.key_prefix}:*", count=500):
            await self._client.delete(name)


def _flat(items: Sequence[LogItem]) -> list[str]:
    """(reply_id, type, data) triples as script arguments."""
    return [part for it in items for part in (it.reply_id, it.type, it.data)]


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


def _entry(entry_id: str, fields: dict[str, str]) -> LogEntry:
    seq = int(str(entry_id).split("-", 1)[0])
    return LogEntry(seq=seq, type=str(fields.get("t", "")), data=str(fields.get("d", "")))
