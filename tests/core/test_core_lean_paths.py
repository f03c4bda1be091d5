"""The loop's lean paths give what the full ones give: results, events for hooks, estimates."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest
from pydantic import BaseModel

from tether._loop.assign import put
from tether.agent import Agent
from tether.context import estimate_text_tokens
from tether.event import EventType, ReplyEndEvent, ToolResultEndEvent
from tether.message import AssistantMsg, ChatUsage, ToolCallBlock, ToolResultState, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import (
    ChatModelBase,
    ChatRequest,
    ModelDelta,
    RetryPolicy,
    ScriptedChatModel,
    TextDelta,
    stream_with_retries,
)
from tether.state import AgentState, ReplyCursor
from tether.tool import FunctionTool, ToolContext, Toolkit, result_of, tool

call = ScriptedChatModel.tool_call


@tool
async def add(a: int, b: int) -> int:
    """Add."""
    return a + b


@tool
def fails(n: int) -> str:
    """Fail."""
    raise ValueError(f"bad {n}")


def _script(*calls: ToolCallBlock) -> ScriptedChatModel:
    return ScriptedChatModel([AssistantMsg("a", list(calls)), AssistantMsg("a", "done")])


class SeesEvents(MiddlewareBase):
    """An `on_acting`/`on_reply` hook that does not watch every event."""

    watches_all_events = False

    def __init__(self) -> None:
        self.seen: list[EventType] = []

    async def on_reply(self, c: Any, call_next: Any) -> AsyncIterator[Any]:
        async for event in call_next(c):
            self.seen.append(event.type)
            yield event


async def test_reply_without_hooks_returns_the_final_message_as_a_copy() -> None:
    agent = Agent("a", "p", _script(call("add", {"a": 1, "b": 2}, id="c")), Toolkit(tools=[add]))
    msg = await agent.reply(UserMsg("u", "x"))
    assert [r.get_text() for r in msg.tool_results] == ["3"]
    assert msg.get_text_content() == "done"
    kept = agent.state.context[-1]
    assert msg == kept and msg is not kept and msg.content[0] is not kept.content[0]
    msg.content.clear()  # the caller's copy: the state keeps its own
    assert len(agent.state.context[-1].content) == 3


async def test_a_hook_that_does_not_watch_every_event_still_hears_results_and_the_end() -> None:
    hook = SeesEvents()
    agent = Agent(
        "a",
        "p",
        _script(call("add", {"a": 1, "b": 2}, id="c"), call("nope", {}, id="d")),
        Toolkit(tools=[add]),
        middlewares=[hook],
    )
    msg = await agent.reply(UserMsg("u", "x"))
    assert hook.seen == [EventType.TOOL_RESULT_END, EventType.TOOL_RESULT_END, EventType.REPLY_END]
    assert msg.get_text_content() == "done"


async def test_the_stream_of_a_lone_tool_announces_its_start_before_its_end() -> None:
    agent = Agent("a", "p", _script(call("add", {"a": 2, "b": 2}, id="c")), Toolkit(tools=[add]))
    events = [e async for e in agent.reply_stream(UserMsg("u", "x"))]
    kinds = [e.type for e in events if e.type.value.startswith("tool_result")]
    assert kinds == [EventType.TOOL_RESULT_START, EventType.TOOL_RESULT_END]
    (end,) = [e for e in events if isinstance(e, ToolResultEndEvent)]
    assert end.tool_result.get_text() == "4" and end.tool_result is not events[-1]
    assert isinstance(events[-1], ReplyEndEvent)
    assert end.tool_result == agent.state.context[-1].tool_results[0]


def _context() -> ToolContext:
    from tether.permission import PermissionContext

    return ToolContext(tool_call_id="c", reply_id="r", permission_context=PermissionContext())


async def test_result_of_turns_failures_and_bad_arguments_into_error_results() -> None:
    raised = await result_of(fails, ToolCallBlock(id="c", name="fails"), _context(), {"n": 1})
    assert raised.state is ToolResultState.ERROR and "ValueError: bad 1" in raised.get_text()
    bad = await result_of(
        add, ToolCallBlock(id="c", name="add", input='{"a": "x"}'), _context(), None
    )
    assert bad.state is ToolResultState.ERROR and "`a`" in bad.get_text()
    assert bad.id == "c" and bad.name == "add"


async def test_result_of_joins_a_streaming_tools_chunks() -> None:
    async def chunks(n: int) -> AsyncIterator[str]:
        """Stream."""
        for i in range(n):
            yield f"{i};"

    streaming = FunctionTool(chunks)
    assert streaming.streams and not add.streams
    result = await result_of(streaming, ToolCallBlock(id="c", name="chunks"), _context(), {"n": 3})
    assert result.get_text() == "0;1;2;" and result.state is ToolResultState.SUCCESS


@pytest.mark.parametrize(
    ("text", "tokens"),
    [  # the figures of the str.translate counting this replaced
        ("The sum is 3 and the echo is hi.", 10),
        ('{"a": 1, "b": 2}', 12),
        ("camelCaseIdentifierVeryLongName\n\n  x = 1;\n", 17),
        ("a" * 40, 8),
        ("...!!", 3),
        ("def f(x):\n    return x * 2  # doubled\n", 14),
    ],
)
def test_ascii_estimates_are_unchanged(text: str, tokens: int) -> None:
    assert estimate_text_tokens(text) == tokens


@pytest.mark.parametrize(
    ("model", "name", "value"),
    [
        (lambda: ToolCallBlock(id="c", name="t"), "state", "finished"),
        (lambda: ReplyCursor(reply_id="r"), "iteration", 3),
        (lambda: AgentState(), "reply", None),
        (lambda: AssistantMsg("a", []), "usage", ChatUsage(input_tokens=1)),
    ],
)
def test_the_loops_writes_store_what_assignment_stores(model: Any, name: str, value: Any) -> None:
    # `put` skips pydantic's __setattr__: only right while the models validate no assignment
    by_setattr = model()
    by_put = by_setattr.model_copy(deep=True)
    cls = type(by_put)
    assert not cls.model_config.get("validate_assignment") and not cls.model_config.get("frozen")
    assert cls.__setattr__ is BaseModel.__setattr__
    setattr(by_setattr, name, value)
    put(by_put, name, value)
    assert by_put.__dict__ == by_setattr.__dict__
    assert by_put.model_fields_set == by_setattr.model_fields_set


async def test_closing_the_retrying_stream_closes_the_providers_stream_at_once() -> None:
    closed: list[bool] = []

    class Slow(ChatModelBase):
        def __init__(self) -> None:
            super().__init__("slow")

        async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
            try:
                yield TextDelta(text="a")
                yield TextDelta(text="b")
            finally:
                closed.append(True)

    stream = stream_with_retries(Slow(), ChatRequest(messages=[]), RetryPolicy())
    assert await anext(stream) == TextDelta(text="a")
    await stream.aclose()  # type: ignore[attr-defined]
    assert closed == [True]
    with pytest.raises(StopAsyncIteration):
        await anext(stream)
