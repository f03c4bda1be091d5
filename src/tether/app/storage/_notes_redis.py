"""`RedisNotes`: notes as Redis strings (`SET NX PX`, `GETDEL`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from tether.app.storage._notes import NotesBase
from tether.errors import MissingDependencyError, StorageUnavailableError

if TYPE_CHECKING:
    from redis.asyncio import Redis

__all__ = ["RedisNotes"]


class RedisNotes(NotesBase):
    """Notes in Redis under `key_prefix` (the same server as the `RedisStorage`)."""

    def __init__(self, url: str, *, key_prefix: str = "tether:notes") -> None:
        try:
            import redis.asyncio as aioredis
        except ImportError as exc:
            raise MissingDependencyError("redis", "redis", "RedisNotes") from exc
        self.key_prefix = key_prefix
        options: dict[str, Any] = {"socket_timeout": 5.0, "decode_responses": True}
        self._client: Redis = aioredis.Redis.from_url(url, **options)
        self._errors = (aioredis.ConnectionError, aioredis.TimeoutError)

    def __repr__(self) -> str:
        return f"RedisNotes(key_prefix={self.key_prefix!r})"

    def _key(self, scope: str, name: str) -> str:
        return f"{self.key_prefix}:{quote(scope, safe='')}:{quote(name, safe='')}"

    def _down(self, exc: BaseException) -> StorageUnavailableError:
        return StorageUnavailableError(f"Redis notes cannot be used ({exc}); is Redis running?")

    async def close(self) -> None:
        """Close the connections."""
        await self._client.aclose()

    async def put(
        self, scope: str, name: str, value: str, *, ttl: float | None = None, only_new: bool = False
    ) -> bool:
        """Store `value`; False if `only_new` and a live note is there."""
        px = None if ttl is None else max(1, int(ttl * 1000))
        try:
            done = await self._client.set(self._key(scope, name), value, px=px, nx=only_new)
        except self._errors as exc:
            raise self._down(exc) from exc
        return bool(done)

    async def get(self, scope: str, name: str) -> str | None:
        """The live note, or None."""
        try:
            found = await self._client.get(self._key(scope, name))
        except self._errors as exc:
            raise self._down(exc) from exc
        return None if found is None else str(found)

    async def pop(self, scope: str, name: str) -> str | None:
        """Remove the note and return it."""
        try:
            found = await self._client.getdel(self._key(scope, name))
        except self._errors as exc:
            raise self._down(exc) from exc
        return None if found is None else str(found)
