"""Bad paths on both backends: a typed error that says what to do, and not one byte changed."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
import redis.asyncio as aioredis
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT, Backend, redis_keys

from tether.app.storage import RedisStorage, SessionKey, SQLiteStorage, StorageBase
from tether.errors import (
    ConfigError,
    SessionConflictError,
    SessionCorruptedError,
    SessionInputError,
    SessionNotFoundError,
    StorageError,
    StorageUnavailableError,
)
from tether.message import TextBlock, UserMsg
from tether.state import AgentState
from tether.testing.storage_conformance import rich_state

U, A, S = "u", "a", "s"


def _wrong_plugin_rounds(state: AgentState) -> None:
    state.plugins["git"] = "three"  # type: ignore[assignment]  # the bug under test


def _not_a_message(state: AgentState) -> None:
    state.context.append("hello")  # type: ignore[arg-type]


def _an_object_in_tool_state(state: AgentState) -> None:
    state.tool_state["Bash"]["handle"] = object()


def _bytes_in_tool_state(state: AgentState) -> None:
    state.tool_state["Bash"]["raw"] = b"\xff\x00"


def _a_lone_surrogate(state: AgentState) -> None:
    state.add_message(UserMsg("user", "broken \ud800 text"))


def _a_future_schema(state: AgentState) -> None:
    state.schema_version = 99


def _a_schema_with_no_migration(state: AgentState) -> None:
    state.schema_version = 0


def _a_number_as_summary(state: AgentState) -> None:
    state.summary = 5  # type: ignore[assignment]


def _a_block_of_the_wrong_type(state: AgentState) -> None:
    block = state.context[0].content[0]
    assert isinstance(block, TextBlock)
    block.text = None  # type: ignore[assignment]


def _an_unknown_role(state: AgentState) -> None:
    state.context[1].role = "robot"  # type: ignore[assignment]


SPOILERS = [
    _wrong_plugin_rounds,
    _not_a_message,
    _an_object_in_tool_state,
    _bytes_in_tool_state,
    _a_lone_surrogate,
    _a_future_schema,
    _a_schema_with_no_migration,
    _a_number_as_summary,
    _a_block_of_the_wrong_type,
    _an_unknown_role,
]


@pytest.mark.parametrize("spoil", SPOILERS, ids=lambda f: f.__name__.strip("_"))
@pytest.mark.parametrize("how", ["update", "upsert"])
async def test_a_state_that_would_not_load_back_is_refused(
    backend: Backend, spoil: Callable[[AgentState], None], how: str
) -> None:
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(4))).state
        before = await backend.raw()
        spoil(state)
        with pytest.raises(SessionInputError, match="nothing was written") as info:
            if how == "update":
                await storage.update_session_state(U, A, S, state)
            else:
                await storage.upsert_session(U, A, S, state=state)
        assert "`get_session`" in str(info.value)  # says how to get a good state back
        assert await backend.raw() == before
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 1


BadCall = Callable[[StorageBase, AgentState], Awaitable[Any]]


async def _update_missing(storage: StorageBase, state: AgentState) -> Any:
    return await storage.update_session_state(U, A, "missing", state)


async def _update_stale(storage: StorageBase, state: AgentState) -> Any:
    state.add_message(UserMsg("user", "stale"))
    return await storage.update_session_state(U, A, S, state, expected_version=7)


async def _update_not_a_state(storage: StorageBase, state: AgentState) -> Any:
    return await storage.update_session_state(U, A, S, state.model_dump())  # type: ignore[arg-type]


async def _upsert_bad_metadata(storage: StorageBase, state: AgentState) -> Any:
    return await storage.upsert_session(U, A, S, state=state, metadata={"x": {1, 2}})


async def _upsert_surrogate_id(storage: StorageBase, state: AgentState) -> Any:
    return await storage.upsert_session(U, A, "s\udc80", state=state)


@pytest.mark.parametrize(
    ("call", "error"),
    [
        (_update_missing, SessionNotFoundError),
        (_update_stale, SessionConflictError),
        (_update_not_a_state, SessionInputError),
        (_upsert_bad_metadata, SessionInputError),
        (_upsert_surrogate_id, SessionInputError),
    ],
    ids=lambda v: getattr(v, "__name__", "").strip("_"),
)
async def test_a_failed_call_changes_no_stored_byte(
    backend: Backend, call: BadCall, error: type[StorageError]
) -> None:
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
        await storage.upsert_session(U, A, "other", metadata={"keep": True})
        before = await backend.raw()
        with pytest.raises(error):
            await call(storage, state)
        assert await backend.raw() == before


@pytest.mark.parametrize("ids", [("u\ud800", A, S), (U, "a\udfff", S), (U, A, "\ud83d")])
async def test_ids_that_are_not_valid_unicode_are_refused(
    backend: Backend, ids: tuple[str, str, str]
) -> None:
    async with backend.make() as storage:
        with pytest.raises(SessionInputError, match="surrogate"):
            await storage.get_session(*ids)
        with pytest.raises(SessionInputError, match="surrogate"):
            await storage.upsert_session(*ids)
        if ids[2] == S:  # the bad id is one that `list_sessions` takes
            with pytest.raises(SessionInputError, match="surrogate"):
                await storage.list_sessions(ids[0], agent_id=ids[1])
        assert await backend.raw() == ([] if backend.name == "sqlite" else {})


async def test_a_save_over_a_corrupted_message_repairs_it(backend: Backend) -> None:
    """A state the storage never saw is compared with the stored bytes exactly."""
    async with backend.make() as storage:
        saved = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
    if backend.name == "sqlite":
        with sqlite3.connect(backend.path, isolation_level=None) as db:
            db.execute("UPDATE tether_messages SET body = '{' WHERE seq = 0")
    else:
        storage = RedisStorage(
            host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=backend.prefix
        )
        await backend.client.lset(storage.keys_of(SessionKey(U, A, S))[1], 0, b"{")
        await storage.close()
    async with backend.make() as storage:
        with pytest.raises(SessionCorruptedError):
            await storage.get_session(U, A, S)
        fresh = AgentState.model_validate(saved.model_dump())
        assert await storage.update_session_state(U, A, S, fresh) == 2
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == saved


async def test_a_closed_storage_says_so_and_does_not_reconnect(backend: Backend) -> None:
    storage = backend.make()
    async with storage:
        state = (await storage.upsert_session(U, A, S)).state
    before = await backend.raw()
    state.add_message(UserMsg("user", "after close"))
    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: storage.get_session(U, A, S),
        lambda: storage.update_session_state(U, A, S, state),
        lambda: storage.upsert_session(U, A, S),
        lambda: storage.list_sessions(U),
        lambda: storage.delete_session(U, A, S),
    ]
    for call in calls:
        with pytest.raises(StorageUnavailableError, match=r"closed.*`async with storage:`"):
            await call()
    assert await backend.raw() == before
    if isinstance(storage, SQLiteStorage):
        assert storage._file._db is None
    await storage.close()  # still idempotent
    async with storage:  # opening it again explicitly is allowed
        assert await storage.update_session_state(U, A, S, state) == 2


async def test_corrupted_numbers_are_named_by_get_and_list(backend: Backend) -> None:
    async with backend.make() as storage:
        await storage.upsert_session(U, A, S)
        await storage.upsert_session(U, A, "healthy")
        if backend.name == "sqlite":
            with sqlite3.connect(backend.path, isolation_level=None) as db:
                db.execute("UPDATE tether_sessions SET version = 'v2' WHERE session_id = 's'")
        else:
            assert isinstance(storage, RedisStorage)
            await backend.client.hset(storage.keys_of(SessionKey(U, A, S))[0], "version", "v2")
        with pytest.raises(SessionCorruptedError, match=r"session_id='s'.*delete_session"):
            await storage.get_session(U, A, S)
        # One damaged row leaves the others listed (it is left out, with a warning).
        assert [i.session_id for i in await storage.list_sessions(U)] == ["healthy"]
        assert await storage.get_session(U, A, "healthy") is not None
        assert await storage.delete_session(U, A, S)
        assert [i.session_id for i in await storage.list_sessions(U)] == ["healthy"]


async def test_a_corrupted_message_count_is_named_by_list(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    async with backend.make() as storage:
        await storage.upsert_session(U, A, S)
        if backend.name == "sqlite":
            with sqlite3.connect(backend.path, isolation_level=None) as db:
                db.execute("UPDATE tether_sessions SET n = 'seven'")
        else:
            assert isinstance(storage, RedisStorage)
            await backend.client.hset(storage.keys_of(SessionKey(U, A, S))[0], "n", "seven")
        assert await storage.list_sessions(U) == []
        assert "session_id='s'" in caplog.text and "'seven'" in caplog.text


@pytest.mark.parametrize(
    "kwargs",
    [{"busy_timeout": "5"}, {"busy_timeout": -1}, {"busy_timeout": float("nan")}, {"path": 3}],
)
def test_bad_sqlite_options_are_config_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        SQLiteStorage(**kwargs)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"socket_timeout": "5"},
        {"socket_timeout": 0},
        {"max_connections": 0},
        {"max_connections": 2.5},
        {"port": "6379"},
    ],
)
def test_bad_redis_options_are_config_errors(kwargs: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        RedisStorage(**kwargs)


async def _serve(reply: bytes | None, held: list[asyncio.StreamWriter]) -> asyncio.Server:
    """A TCP server that answers every connection with `reply` (or never answers)."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held.append(writer)
        await reader.read(1)
        if reply is not None:
            writer.write(reply)
            await writer.drain()
            writer.close()

    return await asyncio.start_server(handle, "127.0.0.1", 0)


@pytest.mark.parametrize(
    ("reply", "words"),
    [
        (b"HTTP/1.1 400 Bad Request\r\n\r\n", "not a Redis server"),
        (None, "TimeoutError"),
    ],
    ids=["http-server", "silent-server"],
)
async def test_a_port_that_is_not_redis_is_unavailable_not_a_crash(
    reply: bytes | None, words: str
) -> None:
    held: list[asyncio.StreamWriter] = []
    server = await _serve(reply, held)
    port = server.sockets[0].getsockname()[1]
    try:
        storage = RedisStorage(host="127.0.0.1", port=port, socket_timeout=0.5)
        with pytest.raises(StorageUnavailableError, match=f"127.0.0.1:{port}") as info:
            await storage.get_session(U, A, S)
        assert words in str(info.value)
        await storage.close()
    finally:
        for writer in held:
            writer.close()
        server.close()
        await server.wait_closed()


@pytest.mark.parametrize("how", ["upsert", "upsert-existing", "delete", "list"])
async def test_a_wrong_type_user_index_fails_before_any_write(redis_prefix: str, how: str) -> None:
    client = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    async with RedisStorage(
        host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix
    ) as st:
        await st.upsert_session(U, A, "existing", state=rich_state(2))
        index = st.keys_of(SessionKey(U, A, S))[2]
        await client.delete(index)
        await client.set(index, "not a set")
        before = await redis_keys(client, redis_prefix)
        with pytest.raises(SessionCorruptedError, match=r"sessions.*wrong Redis type"):
            if how == "upsert":
                await st.upsert_session(U, A, S, state=rich_state(2))
            elif how == "upsert-existing":
                await st.upsert_session(U, A, "existing", metadata={"k": 1})
            elif how == "delete":
                await st.delete_session(U, A, "existing")
            else:
                await st.list_sessions(U)
        assert await redis_keys(client, redis_prefix) == before
    await client.aclose()


async def test_a_loose_but_loadable_value_is_saved_as_it_loads(backend: Backend) -> None:
    """Only what would not load back is refused: a str assigned as content is fine."""
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
        state.context[0].content = "assigned as a plain string"  # type: ignore[assignment]
        state.tool_state["Bash"]["args"] = ("a", "b")
        state.token_anchor = 3.0  # type: ignore[assignment]
        assert await storage.update_session_state(U, A, S, state) == 2
        record = await storage.get_session(U, A, S)
        assert record is not None
        assert record.state.context[0].get_text_content() == "assigned as a plain string"
        assert record.state.tool_state["Bash"]["args"] == ["a", "b"]
        assert record.state.token_anchor == 3
