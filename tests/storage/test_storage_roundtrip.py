"""Round trips an agent relies on, resource hygiene, and Redis key isolation."""

from __future__ import annotations

import asyncio
import base64
import threading

import redis.asyncio as aioredis
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT, Backend, RedisServer, redis_keys

from tether.agent import Agent
from tether.app.storage import RedisStorage
from tether.app.storage._sqlite import THREAD_NAME
from tether.event import ConfirmResult, RequireUserConfirmEvent, UserConfirmResultEvent
from tether.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    TextBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.testing.storage_conformance import rich_state
from tether.tool import Toolkit, tool

U, A, S = "user-ü", "agent/1", "session:1"
call = ScriptedChatModel.tool_call


def heavy_state() -> AgentState:
    """Unicode of every kind, a 3 MB tool output, binary-ish base64, tool and plugin state."""
    state = rich_state(8)
    binary = bytes(range(256)) * 4096
    state.add_message(
        UserMsg(
            "用户",
            [
                TextBlock(
                    text="naïve café — 日本語 — emoji 🧪🚀 — RTL שלום — \u2028\u2029 — \x00 nul"
                ),
                DataBlock(
                    source=Base64Source(
                        media_type="application/octet-stream",
                        data=base64.b64encode(binary).decode(),
                    )
                ),
            ],
        )
    )
    state.context[-2].content.append(
        ToolResultBlock(id="call-1", name="Bash", output="line\n" * 600_000)
    )
    state.tool_state["Bash"] = {"cwd": "/srv/ü", "history": ["ls", "git status"], "n": 2**70}
    state.tool_state["Notebook"] = {"cells": [{"src": "print('hi')", "out": None}], "ok": True}
    state.plugins = {"git": 3, "搜索": 1}
    return state


async def test_a_heavy_state_round_trips_in_a_fresh_storage(backend: Backend) -> None:
    state = heavy_state()
    async with backend.make() as storage:
        await storage.upsert_session(U, A, S, state=state)
    async with backend.make() as fresh:
        record = await fresh.get_session(U, A, S)
        assert record is not None and record.state == state
        loaded = record.state
        loaded.add_message(AssistantMsg("agent", "and a reply after the big one"))
        block = loaded.context[-2].content[0]
        assert isinstance(block, TextBlock)
        block.text += " (edited)"
        assert await fresh.update_session_state(U, A, S, loaded) == 2
    async with backend.make() as again:
        record = await again.get_session(U, A, S)
        assert record is not None and record.state == loaded


async def test_a_paused_reply_continues_in_another_worker(backend: Backend) -> None:
    ran: list[str] = []

    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        """Deploy."""
        ran.append(target)
        return f"deployed {target}"

    def agent(state: AgentState, model: ScriptedChatModel) -> Agent:
        return Agent(
            name="ops", system_prompt="p", model=model, toolkit=Toolkit(tools=[deploy]), state=state
        )

    first = ScriptedChatModel([AssistantMsg("ops", [call("deploy", {"target": "prod"}, id="c1")])])
    async with backend.make() as worker1:
        pausing = agent(AgentState(), first)
        events = [e async for e in pausing.reply_stream(UserMsg("user", "deploy to prod"))]
        pause = events[-1]
        assert isinstance(pause, RequireUserConfirmEvent) and ran == []
        await worker1.upsert_session(U, A, S, state=pausing.state)
    first.assert_complete()

    second = ScriptedChatModel([AssistantMsg("ops", "deployed to prod")])
    async with backend.make() as worker2:
        record = await worker2.get_session(U, A, S)
        assert record is not None and record.state == pausing.state
        resuming = agent(record.state, second)
        (tc,) = pause.tool_calls
        result = await resuming.reply(
            UserConfirmResultEvent(
                reply_id=pause.reply_id,
                confirm_results=[ConfirmResult(confirmed=True, tool_call=tc, rules=[])],
            )
        )
        assert result.get_text_content() == "deployed to prod" and ran == ["prod"]
        assert await worker2.update_session_state(U, A, S, resuming.state) == 2
    second.assert_complete()
    third = ScriptedChatModel(
        [
            AssistantMsg("ops", [call("deploy", {"target": "prod"})]),
            AssistantMsg("ops", "deployed again"),
        ]
    )
    async with backend.make() as worker3:
        record = await worker3.get_session(U, A, S)
        assert record is not None and record.state == resuming.state
        record.state.permission_context.allow_rules.extend(tc.suggested_rules)
        again = await agent(record.state, third).reply(UserMsg("user", "once more"))
        assert again.get_text_content() == "deployed again" and ran == ["prod", "prod"]
        assert await worker3.update_session_state(U, A, S, record.state) == 3
    third.assert_complete()


def sqlite_threads() -> set[threading.Thread]:
    return {t for t in threading.enumerate() if t.name.startswith(THREAD_NAME)}


async def test_close_leaves_no_thread_and_no_task(backend: Backend) -> None:
    before = sqlite_threads()
    tasks = asyncio.all_tasks()
    storage = backend.make()
    async with storage:
        await asyncio.gather(*(storage.upsert_session(U, A, f"s{i}") for i in range(20)))
        started = sqlite_threads() - before
        assert len(started) == (backend.name == "sqlite")
    for thread in started:  # it stops once close() returns; wait for it, don't guess
        await asyncio.to_thread(thread.join, 10)
        assert not thread.is_alive()
    assert asyncio.all_tasks() == tasks


async def test_redis_close_releases_every_connection(redis_server: RedisServer) -> None:
    client = aioredis.Redis(host="127.0.0.1", port=redis_server.port)
    storage = RedisStorage(host="127.0.0.1", port=redis_server.port, key_prefix="t")
    async with storage:
        await asyncio.gather(*(storage.upsert_session(U, A, f"s{i}") for i in range(30)))
        pool = storage._client.connection_pool
        opened = [*pool._available_connections, *pool._in_use_connections]  # type: ignore[attr-defined]
        assert len(opened) > 1 and all(c.is_connected for c in opened)
        assert len(await client.client_list()) == len(opened) + 1  # ours and the checker
    assert not any(c.is_connected for c in opened)  # every socket closed on our side
    await client.aclose()


async def test_redis_prefixes_isolate_apps_and_spare_foreign_keys(redis_prefix: str) -> None:
    client = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    foreign = {
        f"{redis_prefix}:other-app:{{{U}}}:sessions": "a string where an index could be",
        f"{redis_prefix}:app:{{user-%C3%BC}}:agent%2F1": "not a session, under app 1's prefix",
        f"{redis_prefix}:app-2:x": "another app's data",
    }
    for key, value in foreign.items():
        await client.set(key, value)
    app1 = RedisStorage(
        host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=f"{redis_prefix}:app"
    )
    app2 = RedisStorage(
        host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=f"{redis_prefix}:app-2"
    )
    async with app1, app2:
        one = (await app1.upsert_session(U, A, S, state=AgentState(summary="one"))).state
        await app2.upsert_session(U, A, S, state=AgentState(summary="two"))
        before = await redis_keys(client, f"{redis_prefix}:app-2")
        one.add_message(UserMsg("user", "only in app 1"))
        await app1.update_session_state(U, A, S, one)
        assert [i.session_id for i in await app1.list_sessions(U)] == [S]
        assert await app1.delete_session(U, A, S)
        assert await app1.list_sessions(U) == []
        assert await redis_keys(client, f"{redis_prefix}:app-2") == before
        record = await app2.get_session(U, A, S)
        assert record is not None and record.state.summary == "two"
    for key, value in foreign.items():
        assert await client.get(key) == value.encode()
    await client.aclose()
