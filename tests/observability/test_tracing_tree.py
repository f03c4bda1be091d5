"""The span tree of a reply: names, kinds, parents, key attributes; context never leaks."""

from __future__ import annotations

import asyncio

from opentelemetry import trace
from opentelemetry.trace import SpanKind, StatusCode

from tether.agent import Agent
from tether.message import AssistantMsg, ChatUsage, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


def two_tools(seen: dict[str, int]) -> Toolkit:
    """Two concurrency-safe tools that only finish once both have started."""
    started = {"a": asyncio.Event(), "b": asyncio.Event()}

    async def body(me: str, other: str) -> str:
        seen[me] = trace.get_current_span().get_span_context().span_id
        started[me].set()
        await asyncio.wait_for(started[other].wait(), 5)  # both run at once, or this times out
        return f"{me} done"

    @tool(is_read_only=True, is_concurrency_safe=True)
    async def look_a(path: str) -> str:
        """Look at a."""
        return await body("a", "b")

    @tool(is_read_only=True, is_concurrency_safe=True)
    async def look_b(path: str) -> str:
        """Look at b."""
        return await body("b", "a")

    return Toolkit(tools=[look_a, look_b])


def scripted() -> ScriptedChatModel:
    first = AssistantMsg(
        "a", [call("look_a", {"path": "x"}, id="c1"), call("look_b", {"path": "y"}, id="c2")]
    )
    first.usage = ChatUsage(input_tokens=120, output_tokens=30, cache_read_tokens=20)
    last = AssistantMsg("a", "both looked")
    last.usage = ChatUsage(input_tokens=200, output_tokens=10)
    return ScriptedChatModel([first, last])


async def test_two_concurrent_tools_make_this_exact_tree(telemetry) -> None:
    seen: dict[str, int] = {}
    model = scripted()
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=two_tools(seen),
        middlewares=[telemetry.middleware(conversation_id="conv-1")],
    )
    msg = await agent.reply(UserMsg("user", "look"))
    assert msg.get_text_content() == "both looked"
    model.assert_complete()

    spans = telemetry.spans()
    assert sorted(s.name for s in spans) == sorted(
        [
            "invoke_agent bot",
            "chat scripted",
            "chat scripted",
            "execute_tool look_a",
            "execute_tool look_b",
        ]
    )
    root = telemetry.one("invoke_agent bot")
    assert root.parent is None and root.kind is SpanKind.INTERNAL
    for span in spans:
        if span is not root:
            assert span.parent is not None and span.parent.span_id == root.context.span_id
            assert span.context.trace_id == root.context.trace_id
    assert root.attributes["gen_ai.operation.name"] == "invoke_agent"
    assert root.attributes["gen_ai.agent.name"] == "bot"
    assert root.attributes["gen_ai.conversation.id"] == "conv-1"
    assert root.attributes["tether.reply.id"] == msg.id
    assert root.attributes["tether.reply.outcome"] == "finished"
    assert root.attributes["gen_ai.usage.input_tokens"] == 320
    assert root.attributes["gen_ai.usage.output_tokens"] == 40

    chats = telemetry.named("chat scripted")
    assert all(c.kind is SpanKind.CLIENT for c in chats)
    first = min(chats, key=lambda s: s.start_time)
    assert first.attributes["gen_ai.operation.name"] == "chat"
    assert first.attributes["gen_ai.request.model"] == "scripted"
    assert first.attributes["gen_ai.response.model"] == "scripted"
    assert first.attributes["gen_ai.usage.input_tokens"] == 120
    assert first.attributes["gen_ai.usage.output_tokens"] == 30
    assert first.attributes["gen_ai.usage.cache_read.input_tokens"] == 20
    assert first.attributes["gen_ai.usage.cache_creation.input_tokens"] == 0

    tool_a, tool_b = telemetry.one("execute_tool look_a"), telemetry.one("execute_tool look_b")
    for span, call_id in ((tool_a, "c1"), (tool_b, "c2")):
        assert span.kind is SpanKind.INTERNAL
        assert span.attributes["gen_ai.operation.name"] == "execute_tool"
        assert span.attributes["gen_ai.tool.call.id"] == call_id
        assert span.attributes["tether.permission.behavior"] == "allow"
        assert span.attributes["tether.tool.outcome"] == "success"
    # the tools overlapped in time, and each ran with its own span current
    assert tool_a.start_time < tool_b.end_time and tool_b.start_time < tool_a.end_time
    assert seen == {"a": tool_a.context.span_id, "b": tool_b.context.span_id}
    # the first chat ended before the tools began; the second began after they ended
    second = max(chats, key=lambda s: s.start_time)
    assert first.end_time <= min(tool_a.start_time, tool_b.start_time)
    assert second.start_time >= max(tool_a.end_time, tool_b.end_time)


async def test_the_callers_context_is_untouched_between_events(telemetry) -> None:
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=scripted(),
        toolkit=two_tools({}),
        middlewares=[telemetry.middleware()],
    )
    tracer = telemetry.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("caller") as caller:
        async for _event in agent.reply_stream(UserMsg("user", "look")):
            assert trace.get_current_span() is caller
    assert trace.get_current_span() is trace.INVALID_SPAN
    root = telemetry.one("invoke_agent bot")
    assert root.parent is not None and root.parent.span_id == caller.get_span_context().span_id


async def test_two_replies_interleaved_keep_their_own_trees(telemetry) -> None:
    agents = [
        Agent(
            name=name,
            system_prompt="p",
            model=scripted(),
            toolkit=two_tools({}),
            middlewares=[telemetry.middleware()],
        )
        for name in ("one", "two")
    ]
    await asyncio.gather(*(a.reply(UserMsg("user", "look")) for a in agents))
    for name in ("one", "two"):
        root = telemetry.one(f"invoke_agent {name}")
        children = [
            s for s in telemetry.spans() if s.parent and s.parent.span_id == root.context.span_id
        ]
        assert len(children) == 4
        assert {s.context.trace_id for s in children} == {root.context.trace_id}


async def test_a_denied_call_gets_an_error_tool_span_and_never_runs(telemetry) -> None:
    ran: list[str] = []

    @tool
    def remove(path: str) -> str:
        """Remove a file."""
        ran.append(path)
        return "removed"

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("remove", {"path": "a"}, id="c9")]), AssistantMsg("a", "ok")]
    )
    state = AgentState(
        permission_context=PermissionContext(deny_rules=[PermissionRule.parse("remove", "deny")])
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[remove]),
        state=state,
        middlewares=[telemetry.middleware()],
    )
    await agent.reply(UserMsg("user", "remove a"))
    assert ran == []
    root = telemetry.one("invoke_agent bot")
    denied = telemetry.one("execute_tool remove")
    assert denied.parent.span_id == root.context.span_id
    assert denied.attributes["tether.permission.behavior"] == "deny"
    assert denied.attributes["error.type"] == "permission_denied"
    assert denied.status.status_code is StatusCode.ERROR
    assert "tether.permission.reason" in denied.attributes
    decisions = telemetry.points("tether.permission.decisions")
    assert [(a["tether.permission.behavior"], p.value) for a, p in decisions] == [("deny", 1)]
    tools = telemetry.points("tether.tool.calls")
    assert [(a["tether.tool.outcome"], p.value) for a, p in tools] == [("denied", 1)]


async def test_closing_the_stream_early_ends_every_span(telemetry) -> None:
    from contextlib import aclosing

    agent = Agent(
        name="bot",
        system_prompt="p",
        model=scripted(),
        toolkit=two_tools({}),
        middlewares=[telemetry.middleware()],
    )
    async with aclosing(agent.reply_stream(UserMsg("user", "look"))) as events:
        async for event in events:
            if event.type == "tool_call_end":
                break
    root = telemetry.one("invoke_agent bot")
    assert root.attributes["tether.reply.outcome"] == "closed"
    assert root.status.is_unset
    chat = telemetry.one("chat scripted")  # ended too, nothing left open
    assert chat.parent.span_id == root.context.span_id
    assert trace.get_current_span() is trace.INVALID_SPAN


async def test_an_agent_inside_a_tool_nests_under_that_tool(telemetry) -> None:
    inner = Agent(
        name="helper",
        system_prompt="p",
        model=ScriptedChatModel([AssistantMsg("h", "42")], name="small"),
        middlewares=[telemetry.middleware()],
    )

    @tool
    async def ask_helper(question: str) -> str:
        """Ask the helper agent."""
        return (await inner.reply(UserMsg("user", question))).get_text_content() or ""

    outer = Agent(
        name="boss",
        system_prompt="p",
        model=ScriptedChatModel(
            [
                AssistantMsg("a", [call("ask_helper", {"question": "answer?"})]),
                AssistantMsg("a", "42 it is"),
            ]
        ),
        toolkit=Toolkit(tools=[ask_helper]),
        middlewares=[telemetry.middleware()],
    )
    assert (await outer.reply(UserMsg("user", "go"))).get_text_content() == "42 it is"
    boss, helper = telemetry.one("invoke_agent boss"), telemetry.one("invoke_agent helper")
    tool_span = telemetry.one("execute_tool ask_helper")
    assert tool_span.parent.span_id == boss.context.span_id
    assert helper.parent.span_id == tool_span.context.span_id
    assert telemetry.one("chat small").parent.span_id == helper.context.span_id
    assert {s.context.trace_id for s in telemetry.spans()} == {boss.context.trace_id}
