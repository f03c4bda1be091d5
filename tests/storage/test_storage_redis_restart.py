"""Redis killed mid-test: a clear error, and after a restart every saved session intact."""

from __future__ import annotations

import asyncio

import pytest
from storage_helpers import RedisServer

from tether.app.storage import RedisStorage
from tether.errors import StorageUnavailableError
from tether.message import AssistantMsg, UserMsg
from tether.state import AgentState
from tether.testing.storage_conformance import rich_state

U, A = "user", "agent"


def snapshot(state: AgentState) -> AgentState:
    return AgentState.model_validate(state.model_dump(mode="json"))


async def test_sessions_survive_a_kill_and_the_error_names_the_server(
    redis_server: RedisServer,
) -> None:
    address = f"redis://127.0.0.1:{redis_server.port}/0"
    async with RedisStorage(host="127.0.0.1", port=redis_server.port, key_prefix="t") as storage:
        saved: dict[str, AgentState] = {}
        live: dict[str, AgentState] = {}
        for i in range(5):
            state = (await storage.upsert_session(U, A, f"s{i}", state=rich_state(3 + i))).state
            state.add_message(UserMsg("user", f"question {i}"))
            await storage.update_session_state(U, A, f"s{i}", state)
            saved[f"s{i}"], live[f"s{i}"] = snapshot(state), state

        redis_server.kill()
        live["s0"].add_message(AssistantMsg("agent", "written while Redis is down"))
        with pytest.raises(StorageUnavailableError, match=f"Redis at {address}") as info:
            await storage.update_session_state(U, A, "s0", live["s0"])
        assert "half-written" in str(info.value)
        with pytest.raises(StorageUnavailableError, match=address):
            await storage.get_session(U, A, "s1")
        with pytest.raises(StorageUnavailableError, match=address):
            await storage.list_sessions(U)

        redis_server.start()
        for session_id, state in saved.items():
            record = await storage.get_session(U, A, session_id)
            assert record is not None and record.version == 2
            assert record.state == state, session_id
        # The state whose write failed is still tracked at version 2: saving it now works.
        assert await storage.update_session_state(U, A, "s0", live["s0"]) == 3
        record = await storage.get_session(U, A, "s0")
        assert record is not None and record.state == live["s0"]
        assert sorted(i.session_id for i in await storage.list_sessions(U)) == sorted(saved)


async def test_a_write_cut_by_a_crash_is_all_or_nothing(redis_server: RedisServer) -> None:
    async with RedisStorage(host="127.0.0.1", port=redis_server.port, key_prefix="t") as storage:
        state = (await storage.upsert_session(U, A, "s", state=rich_state(50))).state
        acked: list[AgentState] = []
        twenty = asyncio.Event()

        async def writer() -> AgentState:
            for i in range(10_000):
                state.context[-1].metadata["round"] = i  # the reply grows ...
                state.add_message(UserMsg("user", f"{i} " + "x" * 4000))  # ... and the log
                attempt = snapshot(state)
                try:
                    await storage.update_session_state(U, A, "s", state)
                except StorageUnavailableError:
                    return attempt
                acked.append(attempt)
                if len(acked) == 20:
                    twenty.set()
            raise AssertionError("the server was never killed")

        task = asyncio.ensure_future(writer())
        await twenty.wait()
        redis_server.kill()  # while the 21st write is in flight
        in_flight = await task
        redis_server.start()
        record = await storage.get_session(U, A, "s")
        assert record is not None
        assert record.state in (acked[-1], in_flight)
        assert record.version == 1 + len(acked) + (record.state == in_flight)
