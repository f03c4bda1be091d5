"""Stopping a reply at any point leaves a state that loads, validates and continues.

A reply with two tool rounds and a pause is stopped after its k-th event, for every k,
in two ways: the task is cancelled (the cancellation lands at the loop's next await), or
the consumer stops reading and closes the stream (`aclosing`), as a server does when its
client goes away. `checkpoint()` is a bare suspension point, not a wait: it lets the
cancellation land inside the model stream and inside tools.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import aclosing

import pytest

from tether.agent import Agent
from tether.event import (
    ConfirmResult,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
)
from tether.message import (
    AssistantMsg,
    TextBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.model import ChatRequest, ModelDelta, ScriptedChatModel
from tether.state import AgentState
from tether.testing import reply_events, scripted_agent
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


async def checkpoint() -> None:
    await asyncio.sleep(0)  # one trip through the event loop: a place to be cancelled


class SteppingModel(ScriptedChatModel):
    """A scripted model that gives the event loop a turn before every delta."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        await checkpoint()
        async for delta in super().stream(request):
            await checkpoint()
            yield delta


def make_toolkit(ran: list[str]) -> Toolkit:
    @tool(is_read_only=True, is_concurrency_safe=True)
    async def look(n: int) -> str:
        """Look."""
        await checkpoint()
        ran.append(f"look {n}")
        return f"seen {n}"

    @tool(requires_confirmation=True)
    async def delete(path: str) -> str:
        """Delete."""
        await checkpoint()
        ran.append(f"delete {path}")
        return f"deleted {path}"

    return Toolkit(tools=[look, delete])


SCRIPT = [
    AssistantMsg(
        "a",
        [
            TextBlock(text="looking"),
            call("look", {"n": 1}, id="l1"),
            call("look", {"n": 2}, id="l2"),
        ],
    ),
    AssistantMsg("a", [call("delete", {"path": "x"}, id="d1")]),
    AssistantMsg("a", "all done"),
]


def confirm_all(pause: RequireUserConfirmEvent) -> UserConfirmResultEvent:
    return UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=c) for c in pause.tool_calls],
    )


async def phases() -> tuple[int, int]:
    agent = scripted_agent(model=SteppingModel(SCRIPT), toolkit=make_toolkit([]))
    first = await reply_events(agent, "go")
    second = await reply_events(agent, confirm_all(first[-1]))
    return len(first), len(second)


async def stop_after(agent: Agent, inputs: object, k: int, how: str) -> list:
    """Read `k` events of a reply, then stop it; return the events read."""
    seen: list = []

    async def cancel_after_k() -> None:
        async for event in agent.reply_stream(inputs):  # type: ignore[arg-type]
            seen.append(event)
            if len(seen) == k:
                task = asyncio.current_task()
                assert task is not None
                task.cancel()

    async def close_after_k() -> None:
        async with aclosing(agent.reply_stream(inputs)) as stream:  # type: ignore[arg-type]
            async for event in stream:
                seen.append(event)
                if len(seen) == k:
                    return

    task = asyncio.create_task(cancel_after_k() if how == "cancel" else close_after_k())
    try:
        await task
    except asyncio.CancelledError:
        pass
    return seen


def check_consistent(state: AgentState, seen: list) -> None:
    assert AgentState.model_validate_json(state.model_dump_json()) == state
    msg = state.reply_msg()
    if msg is None:
        return
    results = [r.id for r in msg.tool_results]
    assert len(results) == len(set(results))
    assert all(r.state is not ToolResultState.RUNNING for r in msg.tool_results)
    for c in msg.tool_calls:
        assert (c.id in results) == (c.state is ToolCallState.FINISHED), c
    announced = {
        c.id
        for e in seen
        if isinstance(e, RequireUserConfirmEvent | RequireExternalExecutionEvent)
        for c in e.tool_calls
    }
    waiting = {c.id for c in msg.tool_calls if c.state in ("asking", "submitted")}
    assert waiting <= announced, "a call waits for a pause nobody was told about"


async def finish(agent: Agent) -> str | None:
    """Continue a stopped reply to its end, confirming what it asks."""
    inputs: object = None
    while True:
        events = [e async for e in agent.reply_stream(inputs)]  # type: ignore[arg-type]
        if isinstance(events[-1], RequireUserConfirmEvent):
            inputs = confirm_all(events[-1])
            continue
        return events[-1].msg.get_text_content()


@pytest.mark.parametrize("how", ["cancel", "close"])
async def test_stopping_after_every_event_leaves_a_state_that_continues(how: str) -> None:
    n_first, n_second = await phases()
    for k in range(1, n_first + n_second + 1):
        ran: list[str] = []
        agent = scripted_agent(model=SteppingModel(SCRIPT), toolkit=make_toolkit(ran))
        if k <= n_first:
            seen = await stop_after(agent, UserMsg("user", "go"), k, how)
        else:
            pause = [e async for e in agent.reply_stream(UserMsg("user", "go"))][-1]
            seen = [pause, *await stop_after(agent, confirm_all(pause), k - n_first, how)]
        saved = agent.state.model_dump_json()
        for _ in range(10):
            await checkpoint()  # nothing may still be cleaning up behind the caller's back
        assert agent.state.model_dump_json() == saved, f"k={k}: state changed after the stop"
        check_consistent(agent.state, seen)

        cursor = agent.state.reply
        done = cursor.iteration if cursor is not None else len(SCRIPT)
        state = AgentState.model_validate_json(saved)  # continue in a "fresh process"
        if cursor is not None:
            again = scripted_agent(
                model=SteppingModel(SCRIPT[done:]), toolkit=make_toolkit(ran), state=state
            )
            assert await finish(again) == "looking\nall done", f"k={k}"
            again.model.assert_complete()
            state = again.state
        fresh = scripted_agent(
            model=SteppingModel([AssistantMsg("a", "next")]), toolkit=make_toolkit(ran), state=state
        )
        assert (await fresh.reply(UserMsg("user", "next"))).get_text_content() == "next"
        assert len(ran) == len(set(ran)), f"k={k}: a tool ran twice: {ran}"


async def test_a_failed_check_does_not_leave_a_call_asking_without_its_pause() -> None:
    from tether.middleware import MiddlewareBase

    class FailsOnSecond(MiddlewareBase):
        async def on_check_permission(self, c, call_next):  # type: ignore[no-untyped-def]
            if c.tool_call.id == "r2":
                raise RuntimeError("policy service down")
            return await call_next(c)

    @tool(is_concurrency_safe=True, requires_confirmation=True)
    def risky(n: int) -> str:
        """Needs confirmation."""
        return f"ok {n}"

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("risky", {"n": 1}, id="r1"), call("risky", {"n": 2}, id="r2")]),
            AssistantMsg("a", "fresh start"),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[risky]),
        middlewares=[FailsOnSecond()],
    )
    with pytest.raises(RuntimeError, match="policy service down"):
        await agent.reply(UserMsg("user", "x"))
    check_consistent(agent.state, [])
    # nothing is paused, so a new message is accepted and closes the failed reply
    assert (await agent.reply(UserMsg("user", "y"))).get_text_content() == "fresh start"
    results = agent.state.context[1].tool_results
    assert [(r.id, r.state) for r in results] == [
        ("r1", ToolResultState.INTERRUPTED),
        ("r2", ToolResultState.INTERRUPTED),
    ]


async def test_closing_the_stream_mid_batch_settles_the_state_before_close_returns() -> None:
    started = asyncio.Event()
    finished: list[str] = []

    @tool(is_concurrency_safe=True)
    async def slow(n: int) -> str:
        """Slow."""
        started.set()
        try:
            await asyncio.Event().wait()
        finally:
            finished.append(f"slow {n} stopped")
        return "never"

    @tool(is_concurrency_safe=True)
    def quick() -> str:
        """Quick."""
        return "quick"

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("slow", {"n": 1}, id="s1"), call("quick", id="q1")])]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[slow, quick]))
    async with aclosing(agent.reply_stream(UserMsg("user", "x"))) as stream:
        async for event in stream:
            if getattr(event, "block_id", None) == "q1" and event.type == "tool_result_end":
                break
    assert finished == ["slow 1 stopped"]  # the running tool was stopped, not left running
    results = {r.id: r.state for r in agent.state.reply_msg().tool_results}
    assert results == {"s1": ToolResultState.INTERRUPTED, "q1": ToolResultState.SUCCESS}
    assert isinstance(agent.state.reply_msg().tool_results[0], ToolResultBlock)
