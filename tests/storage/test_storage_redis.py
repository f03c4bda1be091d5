"""RedisStorage specifics: key layout, TTL, corrupted keys, config, idempotent retries."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from typing import Any

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT

from _ports import refused_port
from tether.app.storage import RedisStorage, SessionKey
from tether.errors import (
    ConfigError,
    SessionCorruptedError,
    StateVersionError,
    StorageUnavailableError,
)
from tether.message import UserMsg
from tether.state import SCHEMA_VERSION
from tether.testing.storage_conformance import rich_state

U, A, S = "user:1", "agent{1}", "session 1"


async def version_of(client: aioredis.Redis, head: str) -> int:
    raw = await client.hget(head, "version")
    assert isinstance(raw, bytes)
    return int(raw)


@pytest_asyncio.fixture
async def client() -> AsyncIterator[aioredis.Redis]:
    conn = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    yield conn
    await conn.aclose()


@pytest_asyncio.fixture
async def storage(redis_prefix: str) -> AsyncIterator[RedisStorage]:
    async with RedisStorage(
        host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix
    ) as opened:
        yield opened


async def test_keys_hold_all_three_ids(
    storage: RedisStorage, client: aioredis.Redis, redis_prefix: str
) -> None:
    state = (await storage.upsert_session(U, A, S, state=rich_state(4))).state
    keys = sorted([k.decode() async for k in client.scan_iter(match=f"{redis_prefix}:*")])
    head = f"{redis_prefix}:{{user%3A1}}:agent%7B1%7D:session%201"
    assert keys == sorted([f"{redis_prefix}:{{user%3A1}}:sessions", head, f"{head}:msgs"])
    assert storage.keys_of(SessionKey(U, A, S))[0] == head
    assert await client.llen(f"{head}:msgs") == 4
    assert await version_of(client, head) == 1
    state.add_message(UserMsg("user", "more"))
    await storage.update_session_state(U, A, S, state)
    assert await client.llen(f"{head}:msgs") == 5
    assert await version_of(client, head) == 2


async def test_ttl_is_set_and_refreshed_by_writes(
    redis_prefix: str, client: aioredis.Redis
) -> None:
    async with RedisStorage(
        port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix, ttl=1000
    ) as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(2))).state
        head, msgs, index = storage.keys_of(SessionKey(U, A, S))
        for key in (head, msgs, index):
            assert 0 < await client.ttl(key) <= 1000
        await client.expire(head, 50)
        state.add_message(UserMsg("user", "x"))
        await storage.update_session_state(U, A, S, state)
        assert await client.ttl(head) > 50


async def test_an_expired_session_disappears_from_the_list(
    storage: RedisStorage, client: aioredis.Redis
) -> None:
    await storage.upsert_session(U, A, S)
    await storage.upsert_session(U, A, "other")
    head, msgs, index = storage.keys_of(SessionKey(U, A, S))
    await client.delete(head, msgs)  # what an expiry does
    assert [i.session_id for i in await storage.list_sessions(U)] == ["other"]
    assert await client.scard(index) == 1  # the stale index entry was dropped


@pytest.mark.parametrize(
    "damage",
    [
        ("hset", "state", b"{not json"),
        ("hset", "state", b'{"plugins": "x"}'),
        ("hset", "metadata", b"[]"),
        ("hset", "n", b"seven"),
        ("hdel", "created_at"),
        ("rpush", b'{"name": "x"}'),
        ("lset", b"garbage"),
        ("set",),
    ],
)
async def test_a_corrupted_key_is_named_and_spares_the_others(
    storage: RedisStorage, client: aioredis.Redis, damage: tuple[Any, ...]
) -> None:
    await storage.upsert_session(U, A, S, state=rich_state(3))
    healthy = (await storage.upsert_session(U, A, "healthy", state=rich_state(2))).state
    head, msgs, _ = storage.keys_of(SessionKey(U, A, S))
    op, *args = damage
    if op == "hset":
        await client.hset(head, args[0], args[1])
    elif op == "hdel":
        await client.hdel(head, args[0])
    elif op == "rpush":
        await client.rpush(msgs, args[0])
    elif op == "lset":
        await client.lset(msgs, 0, args[0])
    else:
        await client.set(head, "a string, not a hash")
    with pytest.raises(SessionCorruptedError, match=r"session_id='session 1'") as info:
        await storage.get_session(U, A, S)
    assert head in str(info.value)
    other = await storage.get_session(U, A, "healthy")
    assert other is not None and other.state == healthy
    assert await storage.delete_session(U, A, S)


async def test_an_update_over_a_tampered_log_is_refused(
    storage: RedisStorage, client: aioredis.Redis
) -> None:
    state = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
    head, msgs, _ = storage.keys_of(SessionKey(U, A, S))
    await client.rpush(msgs, b"{}")
    state.add_message(UserMsg("user", "x"))
    with pytest.raises(SessionCorruptedError, match="message log"):
        await storage.update_session_state(U, A, S, state)
    assert await version_of(client, head) == 1


async def test_a_future_schema_version_is_refused_clearly(
    storage: RedisStorage, client: aioredis.Redis
) -> None:
    await storage.upsert_session(U, A, S, state=rich_state(3))
    head = storage.keys_of(SessionKey(U, A, S))[0]
    raw = await client.hget(head, "state")
    assert isinstance(raw, bytes)
    await client.hset(
        head, "state", raw.replace(b'"schema_version":%d' % SCHEMA_VERSION, b'"schema_version":7')
    )
    with pytest.raises(StateVersionError, match="schema_version 7"):
        await storage.get_session(U, A, S)


async def test_a_retried_write_is_applied_once(storage: RedisStorage) -> None:
    """A write re-sent after a lost reply (same write id) changes nothing the second time."""
    state = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
    state.add_message(UserMsg("user", "once"))
    captured = []
    original = storage._apply

    async def capture(key, delta):  # type: ignore[no-untyped-def]
        captured.append(delta)
        return await original(key, delta)

    storage._apply = capture  # type: ignore[method-assign]
    assert await storage.update_session_state(U, A, S, state) == 2
    assert await original(SessionKey(U, A, S), captured[0]) == 2  # the resend
    loaded = await storage.get_session(U, A, S)
    assert loaded is not None and loaded.version == 2 and loaded.state == state


async def test_a_server_that_is_not_running_is_unavailable() -> None:
    with (
        refused_port() as port,
        pytest.raises(StorageUnavailableError, match=f"redis://127.0.0.1:{port}/0"),
    ):
        async with RedisStorage(host="127.0.0.1", port=port):
            pass


async def test_a_url_password_never_appears_in_errors() -> None:
    with refused_port() as port:
        storage = RedisStorage(url=f"redis://:hunter2@127.0.0.1:{port}/3")
        with pytest.raises(StorageUnavailableError) as info:
            await storage.get_session(U, A, S)
    assert "hunter2" not in str(info.value) and f"127.0.0.1:{port}/3" in str(info.value)
    await storage.close()


@pytest.mark.parametrize(
    "kwargs",
    [{"key_prefix": ""}, {"key_prefix": "a{b}"}, {"ttl": 0}, {"ttl": 1.5}, {"ttl": True}],
)
def test_bad_options_are_config_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        RedisStorage(**kwargs)


def test_a_missing_redis_package_names_the_extra() -> None:
    program = textwrap.dedent(
        """
        import sys
        sys.modules["redis"] = None
        import tether, tether.app.storage
        assert "redis" not in [m for m in sys.modules if sys.modules[m] is not None]
        from tether.errors import MissingDependencyError
        try:
            tether.app.storage.RedisStorage()
        except MissingDependencyError as exc:
            print(exc)
        """
    )
    out = subprocess.run(
        [sys.executable, "-c", program], capture_output=True, text=True, timeout=60, check=True
    )
    assert "RedisStorage needs the 'redis' package" in out.stdout
    assert "pip install 'tether[redis]'" in out.stdout
