"""O(Δ) writes: a reply costs the same bytes on a 10- and a 1,000-message session."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis.asyncio as aioredis
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT, RedisServer

from tether.app.storage import RedisStorage, SessionDelta, SQLiteStorage, StorageBase
from tether.message import AssistantMsg, TextBlock, UserMsg
from tether.state import AgentState
from tether.testing.storage_conformance import rich_state

U, A, S = "u", "a", "s"


def recording(storage: StorageBase) -> list[SessionDelta]:
    """Record every delta the storage applies."""
    deltas: list[SessionDelta] = []
    original = storage._apply

    async def apply(key, delta):  # type: ignore[no-untyped-def]
        deltas.append(delta)
        return await original(key, delta)

    storage._apply = apply  # type: ignore[method-assign]
    return deltas


def size(delta: SessionDelta) -> int:
    return len(delta.head) + sum(len(b) for _, b in delta.changed) + sum(map(len, delta.appended))


async def one_reply(storage: StorageBase, state: AgentState) -> None:
    """A reply as the loop saves it: question, a paused partial answer, the final answer."""
    state.add_message(UserMsg("user", "What changed in the last deploy?"))
    reply = AssistantMsg("agent", "Looking")
    state.add_message(reply)
    await storage.update_session_state(U, A, S, state)
    reply.content.append(TextBlock(text="The deploy changed the config loader." * 3))
    await storage.update_session_state(U, A, S, state)


def make(backend: str, tmp_path: Path, prefix: str) -> StorageBase:
    if backend == "sqlite":
        return SQLiteStorage(tmp_path / "s.db")
    return RedisStorage(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=prefix)


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_a_reply_writes_only_what_changed(
    backend: str, tmp_path: Path, redis_prefix: str
) -> None:
    sizes = {}
    for n in (10, 1000):
        async with make(backend, tmp_path / str(n), f"{redis_prefix}:{n}") as storage:
            state = (await storage.upsert_session(U, A, S, state=rich_state(n))).state
            deltas = recording(storage)
            await one_reply(storage, state)
            first, second = deltas
            assert (first.changed, len(first.appended)) == ((), 2)
            assert (len(second.changed), second.appended) == (1, ())
            assert second.changed[0][0] == n + 1  # only the growing reply is rewritten
            sizes[n] = size(first) + size(second)
            full = len(state.model_dump_json())
            loaded = await storage.get_session(U, A, S)
            assert loaded is not None and loaded.state == state
        assert sizes[n] < 3000 and (n == 10 or full > 100 * sizes[n])
    assert abs(sizes[1000] - sizes[10]) <= 8  # only digits in the head's token counts differ


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_compression_is_the_one_full_rewrite(
    backend: str, tmp_path: Path, redis_prefix: str
) -> None:
    async with make(backend, tmp_path, redis_prefix) as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(300))).state
        deltas = recording(storage)
        state.replace_context(state.context[-40:], "a summary of 260 messages")
        await storage.update_session_state(U, A, S, state)
        (delta,) = deltas
        assert (delta.base_count, delta.count, len(delta.changed), delta.appended) == (
            300,
            40,
            40,
            (),
        )
        state.add_message(UserMsg("user", "after compression"))
        await storage.update_session_state(U, A, S, state)
        assert (deltas[1].changed, len(deltas[1].appended)) == ((), 1)
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == state and len(loaded.state.context) == 41


async def test_redis_receives_flat_bytes_per_reply(redis_server: RedisServer) -> None:
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    received = {}
    try:
        for n in (10, 1000):
            async with RedisStorage(port=redis_server.port, key_prefix=f"p{n}") as storage:
                state = (await storage.upsert_session(U, A, S, state=rich_state(n))).state
                info = await client.info("stats")
                before = info["total_net_input_bytes"]
                for _ in range(5):
                    await one_reply(storage, state)
                info = await client.info("stats")
                received[n] = info["total_net_input_bytes"] - before
    finally:
        await client.aclose()
    # includes the INFO command itself; 5 replies on 1,000 messages vs on 10
    assert received[1000] < 1.1 * received[10], received
    assert received[1000] < 5 * 3500, received
