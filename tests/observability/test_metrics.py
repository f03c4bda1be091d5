"""The metrics of a reply: GenAI token usage and duration, tools by outcome, replies."""

from __future__ import annotations

from tether.agent import Agent
from tether.message import AssistantMsg, ChatUsage, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


@tool(is_read_only=True, is_concurrency_safe=True)
def works(x: int) -> int:
    """Works."""
    return x


@tool(is_read_only=True, is_concurrency_safe=True)
def breaks(x: int) -> int:
    """Breaks."""
    raise ValueError("no")


async def test_token_usage_durations_and_tool_outcomes(telemetry) -> None:
    first = AssistantMsg(
        "a", [call("works", {"x": 1}), call("breaks", {"x": 2}), call("works", {"x": 3})]
    )
    first.usage = ChatUsage(input_tokens=100, output_tokens=20)
    last = AssistantMsg("a", "ok")
    last.usage = ChatUsage(input_tokens=300, output_tokens=5)
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel([first, last]),
        toolkit=Toolkit(tools=[works, breaks]),
        middlewares=[telemetry.middleware()],
    )
    await agent.reply(UserMsg("user", "go"))
    tokens = {
        a["gen_ai.token.type"]: (p.count, p.sum)
        for a, p in telemetry.points("gen_ai.client.token.usage")
    }
    assert tokens == {"input": (2, 400), "output": (2, 25)}
    for attributes, _ in telemetry.points("gen_ai.client.token.usage"):
        assert attributes["gen_ai.operation.name"] == "chat"
        assert attributes["gen_ai.request.model"] == "scripted"
    durations = telemetry.points("gen_ai.client.operation.duration")
    assert [p.count for _, p in durations] == [2] and "error.type" not in durations[0][0]
    calls = {
        (a["gen_ai.tool.name"], a["tether.tool.outcome"]): p.value
        for a, p in telemetry.points("tether.tool.calls")
    }
    assert calls == {("works", "success"): 2, ("breaks", "error"): 1}
    tool_durations = {
        a["gen_ai.tool.name"]: p.count for a, p in telemetry.points("tether.tool.duration")
    }
    assert tool_durations == {"works": 2, "breaks": 1}
    replies = [(a["tether.reply.outcome"], p.value) for a, p in telemetry.points("tether.replies")]
    assert replies == [("finished", 1)]
    broken = telemetry.one("execute_tool breaks")
    assert broken.attributes["error.type"] == "tool_error"
    assert broken.attributes["tether.tool.outcome"] == "error"
