"""Save points: where the loop awaits its checkpoint, failing checkpoints, calls found running."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from tether.agent import Agent
from tether.app.storage import SQLiteStorage
from tether.errors import SessionConflictError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import AssistantMsg, ToolCallState, ToolResultBlock, UserMsg
from tether.middleware import MiddlewareBase, PermissionCall
from tether.model import ScriptedChatModel
from tether.state import AgentState, ReplyCursor
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call
KEY = ("u", "a", "s")
RAN: list[str] = []


@tool(is_concurrency_safe=True)
async def charge(amount: int) -> str:
    """Charge."""
    RAN.append("charge")
    return "charged"


@tool(is_concurrency_safe=True, is_idempotent=True)
async def lookup(item: str) -> str:
    """Look up."""
    RAN.append("lookup")
    return "found"


@tool(requires_confirmation=True)
async def transfer(amount: int) -> str:
    """Transfer."""
    RAN.append("transfer")
    return "sent"


def _script() -> list[Any]:
    return [
        AssistantMsg(
            "a", [call("charge", {"amount": 1}, id="c1"), call("lookup", {"item": "x"}, id="c2")]
        ),
        AssistantMsg("a", "done"),
    ]


def _agent(script: list[Any], state: AgentState | None = None) -> Agent:
    tools = Toolkit(tools=[charge, lookup, transfer])
    return Agent("a", "p", ScriptedChatModel(script), tools, state=state)


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


async def test_save_points_come_in_order_and_mark_a_batch_running_before_it_starts() -> None:
    seen: list[tuple[str, ...]] = []

    async def checkpoint(state: AgentState) -> None:
        msg = state.reply_msg()
        calls = tuple(c.state.value for c in msg.tool_calls) if msg is not None else ()
        seen.append((str(state.reply is not None), *calls, f"ran={len(RAN)}"))

    agent = _agent(_script())
    msg = await agent.reply(UserMsg("user", "go"), checkpoint=checkpoint)
    assert msg.get_text_content() == "done"
    assert seen[0] == ("True", "ran=0")  # the reply started
    # The model step and the batch's claim, one write: nothing awaits between them.
    assert seen[1] == ("True", "running", "running", "ran=0")  # before the batch runs
    assert sorted(seen[2][1:3]) == ["finished", "running"]  # one result in
    assert seen[3][1:3] == ("finished", "finished")
    # The final model step and the end, one write: finishing awaits nothing outside.
    assert seen[4] == ("False", "ran=2")
    assert len(seen) == 5


class _AsksNobody(MiddlewareBase):
    """An `on_check_permission` hook that only passes the check on (it could await)."""

    async def on_check_permission(
        self, call: PermissionCall, call_next: Callable[[PermissionCall], Awaitable[Any]]
    ) -> Any:
        return await call_next(call)


async def test_with_a_permission_hook_the_model_step_is_saved_on_its_own_first() -> None:
    seen: list[tuple[str, ...]] = []

    async def checkpoint(state: AgentState) -> None:
        msg = state.reply_msg()
        calls = tuple(c.state.value for c in msg.tool_calls) if msg is not None else ()
        seen.append((str(state.reply is not None), *calls, f"ran={len(RAN)}"))

    agent = _agent(_script())
    agent.middlewares = (_AsksNobody(),)
    msg = await agent.reply(UserMsg("user", "go"), checkpoint=checkpoint)
    assert msg.get_text_content() == "done"
    assert seen[0] == ("True", "ran=0")  # the reply started
    assert seen[1] == ("True", "pending", "pending", "ran=0")  # the model step
    assert seen[2] == ("True", "running", "running", "ran=0")  # the batch, before it runs
    assert sorted(seen[3][1:3]) == ["finished", "running"]  # one result in
    assert seen[4][1:3] == ("finished", "finished")
    assert seen[5] == ("False", "ran=2")  # the final model step with the end
    assert len(seen) == 6


async def test_the_same_grammar_with_reply_stream() -> None:
    count = 0

    async def checkpoint(state: AgentState) -> None:
        nonlocal count
        count += 1

    agent = _agent(_script())
    async for _ in agent.reply_stream(UserMsg("user", "go"), checkpoint=checkpoint):
        pass
    assert count == 5  # the model steps' events wait for the merged writes: merged too


def _dump(state: AgentState) -> Any:
    return json.loads(state.model_dump_json())


# Five save points (the model step merged with the batch's claim, the final one with the
# end), six with a hook.
_FAILURES = [*((n, False) for n in range(1, 6)), *((n, True) for n in range(1, 7))]


@pytest.mark.parametrize(("fail_at", "hooked"), _FAILURES)
async def test_a_failing_checkpoint_leaves_the_state_as_last_stored(
    fail_at: int, hooked: bool, tmp_path: Path
) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        record = await storage.upsert_session(*KEY)
        agent = _agent(_script(), record.state)
        if hooked:
            agent.middlewares = (_AsksNobody(),)
        save = storage.checkpoint(*KEY)
        count = 0

        async def checkpoint(state: AgentState) -> None:
            nonlocal count
            count += 1
            if count == fail_at:
                raise SessionConflictError("another worker saved first")
            await save(state)

        with pytest.raises(SessionConflictError):
            await agent.reply(UserMsg("user", "go"), checkpoint=checkpoint)
        ran = list(RAN)
    async with SQLiteStorage(tmp_path / "s.db") as fresh:
        stored = await fresh.get_session(*KEY)
    assert stored is not None
    assert _dump(agent.state) == _dump(stored.state)
    if fail_at <= (3 if hooked else 2):  # up to the batch's own save point: no tool started
        assert ran == []


async def test_a_call_found_running_is_answered_as_unknown_and_an_idempotent_one_reruns() -> None:
    agent = _agent(_script())
    agent.middlewares = (_AsksNobody(),)  # the model step saved on its own, then the batch
    stopped = 0

    async def stop_at_batch(state: AgentState) -> None:
        nonlocal stopped
        stopped += 1
        if stopped == 3:
            raise RuntimeError("crash")

    with pytest.raises(RuntimeError):
        await agent.reply(UserMsg("user", "go"), checkpoint=stop_at_batch)
    # A process that saved at the batch's save point and died: what it stored.
    msg = agent.state.reply_msg()
    assert msg is not None
    for c in msg.tool_calls:
        c.state = ToolCallState.RUNNING
    loaded = AgentState.model_validate_json(agent.state.model_dump_json())
    pending = loaded.pending
    assert pending is not None and not pending.is_paused
    assert [c.id for c in pending.unknown_outcome] == ["c1", "c2"]
    fresh = _agent([AssistantMsg("a", "checked")], loaded)
    final = await fresh.reply(None)
    results = {b.id: b for b in final.content if isinstance(b, ToolResultBlock)}
    assert results["c1"].state.value == "interrupted" and "unknown" in str(results["c1"].output)
    assert results["c2"].state.value == "success"
    assert RAN == ["lookup"]  # charge never ran again
    assert fresh.state.pending is None


async def test_a_new_message_after_a_crash_closes_running_calls_as_unknown() -> None:
    agent = _agent(_script())
    await agent.reply(UserMsg("user", "go"))
    state = AgentState.model_validate_json(agent.state.model_dump_json())
    reply = state.context[-1]
    state.context[-1] = reply.model_copy(
        update={"content": [b for b in reply.content if not isinstance(b, ToolResultBlock)]}
    )
    for c in state.context[-1].tool_calls:
        c.state = ToolCallState.RUNNING
    state.reply = ReplyCursor(reply_id=reply.id, iteration=1)
    fresh = _agent([AssistantMsg("a", "ok")], state)
    await fresh.reply(UserMsg("user", "again"))
    closed = [b for b in fresh.state.context[1].content if isinstance(b, ToolResultBlock)]
    assert len(closed) == 2 and all("unknown" in str(b.output) for b in closed)


async def test_resuming_a_confirmation_saves_the_call_running_before_it_runs(
    tmp_path: Path,
) -> None:
    agent = _agent(
        [AssistantMsg("a", [call("transfer", {"amount": 5}, id="t")]), AssistantMsg("a", "ok")]
    )
    await agent.reply(UserMsg("user", "pay"))
    pending = agent.state.pending
    assert pending is not None and [c.id for c in pending.awaiting_confirmation] == ["t"]
    states: list[tuple[str, int]] = []

    async def checkpoint(state: AgentState) -> None:
        msg = state.reply_msg()
        if msg is not None:
            states.append((msg.tool_calls[0].state.value, len(RAN)))

    event = UserConfirmResultEvent(
        reply_id=pending.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=pending.awaiting_confirmation[0])],
    )
    await agent.reply(event, checkpoint=checkpoint)
    assert states[:3] == [("allowed", 0), ("running", 0), ("finished", 1)]


async def test_storage_checkpoint_conflicts_before_the_second_worker_runs_its_tool(
    tmp_path: Path,
) -> None:
    agent = _agent([AssistantMsg("a", [call("transfer", {"amount": 5}, id="t")])])
    await agent.reply(UserMsg("user", "pay"))
    async with SQLiteStorage(tmp_path / "s.db") as one, SQLiteStorage(tmp_path / "s.db") as two:
        await one.upsert_session(*KEY, state=agent.state)
        first, second = await one.get_session(*KEY), await two.get_session(*KEY)
        assert first is not None and second is not None
        workers = [_agent([AssistantMsg("a", "ok")], r.state) for r in (first, second)]
        pending = first.state.pending
        assert pending is not None
        event = UserConfirmResultEvent(
            reply_id=pending.reply_id,
            confirm_results=[
                ConfirmResult(confirmed=True, tool_call=pending.awaiting_confirmation[0])
            ],
        )
        await workers[0].reply(event, checkpoint=one.checkpoint(*KEY))
        before = _dump(second.state)
        with pytest.raises(SessionConflictError):
            await workers[1].reply(event, checkpoint=two.checkpoint(*KEY))
        assert RAN == ["transfer"]
        assert _dump(workers[1].state) == before
