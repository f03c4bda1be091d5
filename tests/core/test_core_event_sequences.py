"""Exact event sequences of the loop (issue acceptance)."""

from __future__ import annotations

import asyncio
import json

import pytest
from dirty_equals import IsStr

from tether.agent import Agent, ReActConfig
from tether.event import EventType, ToolResultEndEvent, fold_event
from tether.message import AssistantMsg, Msg, TextBlock, ThinkingBlock, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.testing import event_types, reply_events
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call
T = EventType


async def test_text_only() -> None:
    model = ScriptedChatModel([AssistantMsg("a", "Hello there, how can I help you today?")])
    agent = Agent(name="bot", system_prompt="Be nice.", model=model)
    events = await reply_events(agent, "hi")
    body = [T.TEXT_BLOCK_DELTA] * 3  # 40 chars streamed in 16-char pieces
    assert event_types(events) == [
        T.REPLY_START,
        T.MODEL_CALL_START,
        T.TEXT_BLOCK_START,
        *body,
        T.TEXT_BLOCK_END,
        T.MODEL_CALL_END,
        T.REPLY_END,
    ]
    assert "".join(e.delta for e in events if e.type is T.TEXT_BLOCK_DELTA) == (
        "Hello there, how can I help you today?"
    )
    reply_id = events[0].reply_id
    assert all(e.reply_id == reply_id for e in events)
    final = events[-1].msg
    assert (
        final.id == reply_id
        and final.get_text_content() == "Hello there, how can I help you today?"
    )
    model.assert_complete()


async def test_thinking_then_text() -> None:
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [ThinkingBlock(thinking="Let me think.", signature="sig"), TextBlock(text="42")],
            )
        ]
    )
    events = await reply_events(Agent(name="bot", system_prompt="p", model=model), "hi")
    assert event_types(events) == [
        T.REPLY_START,
        T.MODEL_CALL_START,
        T.THINKING_BLOCK_START,
        T.THINKING_BLOCK_DELTA,
        T.THINKING_BLOCK_END,
        T.TEXT_BLOCK_START,
        T.TEXT_BLOCK_DELTA,
        T.TEXT_BLOCK_END,
        T.MODEL_CALL_END,
        T.REPLY_END,
    ]
    assert events[4].signature == "sig"
    thinking = events[-1].msg.content[0]
    assert isinstance(thinking, ThinkingBlock) and thinking.signature == "sig"


def _gate_tools(order: list[str], release: asyncio.Event):
    @tool(is_concurrency_safe=True, is_read_only=True)
    async def slow(name: str) -> str:
        """Wait until released."""
        order.append(f"start {name}")
        await release.wait()
        order.append(f"end {name}")
        return f"slow {name}"

    @tool(is_concurrency_safe=True, is_read_only=True)
    async def fast(name: str) -> str:
        """Release the slow one."""
        order.append(f"start {name}")
        release.set()
        order.append(f"end {name}")
        return f"fast {name}"

    @tool
    async def serial(name: str) -> str:
        """Not concurrency-safe."""
        order.append(f"serial {name}")
        return f"serial {name}"

    return slow, fast, serial


async def test_two_concurrent_tool_calls_keep_call_order() -> None:
    order: list[str] = []
    slow, fast, serial = _gate_tools(order, asyncio.Event())
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a", [call("slow", {"name": "A"}, id="c1"), call("fast", {"name": "B"}, id="c2")]
            ),
            AssistantMsg("a", "done"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[slow, fast]))
    events = await reply_events(agent, "hi")
    # slow starts first and can only finish because fast ran meanwhile: they ran concurrently
    assert order == ["start A", "start B", "end B", "end A"]
    assert event_types(events) == [
        T.REPLY_START,
        T.MODEL_CALL_START,
        T.TOOL_CALL_START,
        T.TOOL_CALL_DELTA,
        T.TOOL_CALL_START,
        T.TOOL_CALL_DELTA,
        T.TOOL_CALL_END,
        T.TOOL_CALL_END,
        T.MODEL_CALL_END,
        T.TOOL_RESULT_START,
        T.TOOL_RESULT_START,
        T.TOOL_RESULT_END,
        T.TOOL_RESULT_END,
        T.MODEL_CALL_START,
        T.TEXT_BLOCK_START,
        T.TEXT_BLOCK_DELTA,
        T.TEXT_BLOCK_END,
        T.MODEL_CALL_END,
        T.REPLY_END,
    ]
    ends = [e for e in events if isinstance(e, ToolResultEndEvent)]
    assert [e.block_id for e in ends] == ["c2", "c1"]  # finished out of order...
    final = events[-1].msg
    assert [b.id for b in final.tool_results] == ["c1", "c2"]  # ...but kept in call order
    # the second request carries both results after both calls
    second = model.calls[1].messages[-1]
    assert [b.type for b in second.content] == [
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
    ]


async def test_serial_tool_between_concurrent_ones() -> None:
    order: list[str] = []
    first, second = asyncio.Event(), asyncio.Event()
    slow1, fast1, serial = _gate_tools(order, first)
    slow2, fast2, _ = _gate_tools(order, second)
    slow2.name, fast2.name = "slow2", "fast2"
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [
                    call("slow", {"name": "A"}, id="c1"),
                    call("fast", {"name": "B"}, id="c2"),
                    call("serial", {"name": "C"}, id="c3"),
                    call("slow2", {"name": "D"}, id="c4"),
                    call("fast2", {"name": "E"}, id="c5"),
                ],
            ),
            AssistantMsg("a", "ok"),
        ]
    )
    toolkit = Toolkit(tools=[slow1, fast1, serial, slow2, fast2])
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
    events = await reply_events(agent, "hi")
    # each slow call can only end because its fast partner ran meanwhile (same batch);
    # the serial call runs after the first batch and before the second one starts
    assert order == [
        "start A",
        "start B",
        "end B",
        "end A",
        "serial C",
        "start D",
        "start E",
        "end E",
        "end D",
    ]
    results = [
        (e.type, e.block_id) for e in events if e.type in (T.TOOL_RESULT_START, T.TOOL_RESULT_END)
    ]
    assert results[4:6] == [(T.TOOL_RESULT_START, "c3"), (T.TOOL_RESULT_END, "c3")]
    assert [b.id for b in events[-1].msg.tool_results] == ["c1", "c2", "c3", "c4", "c5"]


async def test_tool_that_raises_becomes_an_error_result() -> None:
    @tool
    def explode(reason: str) -> str:
        """Always fails."""
        raise RuntimeError(f"boom: {reason}")

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("explode", {"reason": "disk full"}, id="c1")]),
            AssistantMsg("a", "sorry"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[explode]))
    events = await reply_events(agent, "hi")
    assert event_types(events) == [
        T.REPLY_START,
        T.MODEL_CALL_START,
        T.TOOL_CALL_START,
        T.TOOL_CALL_DELTA,
        T.TOOL_CALL_END,
        T.MODEL_CALL_END,
        T.TOOL_RESULT_START,
        T.TOOL_RESULT_END,
        T.MODEL_CALL_START,
        T.TEXT_BLOCK_START,
        T.TEXT_BLOCK_DELTA,
        T.TEXT_BLOCK_END,
        T.MODEL_CALL_END,
        T.REPLY_END,
    ]
    result = events[7].tool_result
    assert result.state is ToolResultState.ERROR
    assert "RuntimeError: boom: disk full" in result.output
    # the model saw the error
    assert model.calls[1].messages[-1].tool_results[0].output == result.output


async def test_max_iters_forces_one_final_answer() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("ping", id="c1")]),
            AssistantMsg("a", [call("ping", id="c2")]),
            # the forced step still asks for a tool: it is dropped and the reply ends
            AssistantMsg("a", [TextBlock(text="giving up"), call("ping", id="c3")]),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[ping]),
        react_config=ReActConfig(max_iters=2),
    )
    events = await reply_events(agent, "hi")
    step = [
        T.MODEL_CALL_START,
        T.TOOL_CALL_START,
        T.TOOL_CALL_DELTA,
        T.TOOL_CALL_END,
        T.MODEL_CALL_END,
        T.TOOL_RESULT_START,
        T.TOOL_RESULT_END,
    ]
    # the forced step streams its tool call, but it is dropped and never run
    assert event_types(events) == [
        T.REPLY_START,
        *step,
        *step,
        T.MODEL_CALL_START,
        T.TEXT_BLOCK_START,
        T.TEXT_BLOCK_DELTA,
        T.TEXT_BLOCK_END,
        T.TOOL_CALL_START,
        T.TOOL_CALL_DELTA,
        T.TOOL_CALL_END,
        T.MODEL_CALL_END,
        T.REPLY_END,
    ]
    forced = model.calls[2]
    assert forced.tool_choice == "none" and forced.tools == []
    assert "answer now" in forced.messages[-1].content[-1].hint
    final = events[-1].msg
    assert final.get_text_content() == "giving up"
    assert [c.id for c in final.tool_calls] == ["c1", "c2"]  # c3 was never added
    assert events[-1].type is T.REPLY_END and agent.state.reply is None
    model.assert_complete()


async def test_every_event_round_trips_through_json() -> None:
    from tether.event import event_adapter

    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [ThinkingBlock(thinking="hm", signature="s"), call("ping", id="c1")]),
            AssistantMsg("a", "done"),
        ]
    )
    events = await reply_events(
        Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[ping])), "hi"
    )
    for event in events:
        again = event_adapter.validate_json(event_adapter.dump_json(event))
        assert again == event and type(again) is type(event)
        assert json.loads(event.model_dump_json())["type"] == str(event.type)
    assert events[0].id == IsStr(min_length=8)


async def test_append_event_rebuilds_the_reply() -> None:
    @tool(is_concurrency_safe=True)
    def ping(n: int) -> str:
        """Ping."""
        return f"pong {n}"

    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [
                    ThinkingBlock(thinking="plan"),
                    TextBlock(text="calling"),
                    call("ping", {"n": 1}, id="c1"),
                    call("ping", {"n": 2}, id="c2"),
                ],
            ),
            AssistantMsg("a", "all done"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[ping]))
    events = await reply_events(agent, "hi")
    folded = Msg(name="bot", role="assistant", content=[])
    for event in events:
        fold_event(folded, event)
    final = events[-1].msg
    assert folded.id == final.id
    assert [
        b.model_dump(exclude={"id"}) if b.type in ("text", "thinking") else b.model_dump()
        for b in folded.content
    ] == [
        b.model_dump(exclude={"id"}) if b.type in ("text", "thinking") else b.model_dump()
        for b in final.content
    ]


def _script() -> list:
    return [
        AssistantMsg(
            "a",
            [
                ThinkingBlock(thinking="think " * 10, signature="s"),
                TextBlock(text="calling " * 5),
                call("ping", {"n": 1}, id="c1"),
            ],
        ),
        AssistantMsg("a", "the answer is " * 4),
    ]


@tool
def ping(n: int) -> str:
    """Ping."""
    return f"pong {n}"


async def test_reply_builds_the_same_message_as_reply_stream() -> None:
    def strip(msg: Msg) -> list:
        return [
            b.model_dump(exclude={"id"}) if b.type in ("text", "thinking") else b.model_dump()
            for b in msg.content
        ]

    quiet = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel(_script()),
        toolkit=Toolkit(tools=[ping]),
    )
    streamed = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel(_script()),
        toolkit=Toolkit(tools=[ping]),
    )
    a = await quiet.reply(UserMsg("user", "x"))
    b = [e async for e in streamed.reply_stream(UserMsg("user", "x"))][-1].msg
    assert strip(a) == strip(b)
    assert quiet.model.calls[1].messages[-1].content[:3] == quiet.state.context[-1].content[:3]


@pytest.mark.parametrize("hook", ["on_reply", "on_reasoning", "on_acting"])
async def test_a_watching_middleware_sees_its_events_through_reply(hook: str) -> None:
    from tether.middleware import MiddlewareBase

    seen: list[EventType] = []

    async def watch(self, c, call_next):
        async for e in call_next(c):
            seen.append(e.type)
            yield e

    Watch = type("Watch", (MiddlewareBase,), {hook: watch})
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel(_script()),
        toolkit=Toolkit(tools=[ping]),
        middlewares=[Watch()],
    )
    await agent.reply(UserMsg("user", "x"))
    expected = {
        "on_reply": [
            T.REPLY_START,
            T.MODEL_CALL_START,
            T.THINKING_BLOCK_DELTA,
            T.TEXT_BLOCK_DELTA,
            T.TOOL_CALL_DELTA,
            T.TOOL_CALL_END,
            T.TOOL_RESULT_START,
            T.REPLY_END,
        ],
        "on_reasoning": [
            T.MODEL_CALL_START,
            T.THINKING_BLOCK_DELTA,
            T.TOOL_CALL_END,
            T.MODEL_CALL_END,
        ],
        "on_acting": [T.TOOL_RESULT_START, T.TOOL_RESULT_END],
    }[hook]
    for kind in expected:
        assert kind in seen


async def test_reply_without_watchers_skips_only_events_nobody_needs() -> None:
    from tether.middleware import MiddlewareBase

    seen: list[EventType] = []

    class Tail(MiddlewareBase):  # watches the stream without asking for every event
        watches_all_events = False

        async def on_reply(self, call, call_next):
            async for e in call_next(call):
                seen.append(e.type)
                yield e

    agent = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel(_script()),
        toolkit=Toolkit(tools=[ping]),
        middlewares=[Tail()],
    )
    await agent.reply(UserMsg("user", "x"))
    assert seen == [T.TOOL_RESULT_END, T.REPLY_END]
