"""Tool use inside sampling (MCP 2025-11-25): a server offers a tool with its
`sampling/createMessage`; the model calls it, the server runs it and asks again with the
result (`servers/sampling_tools_server.py`, over stdio, official SDK)."""

from __future__ import annotations

import sys
from pathlib import Path

from tether.agent import Agent
from tether.mcp import MCPClient, ModelSampler, SamplingRequest, StdioMCPConfig
from tether.mcp._sampling_msgs import to_messages
from tether.message import AssistantMsg, ToolCallBlock, ToolResultBlock, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.permission import PermissionContext
from tether.state import AgentState
from tether.testing import tool_results
from tether.tool import Toolkit

SERVER = Path(__file__).parent / "servers" / "sampling_tools_server.py"
tc = ScriptedChatModel.tool_call


async def _yes(request: SamplingRequest) -> bool:
    return True


def _agent(sampler: ModelSampler) -> Agent:
    config = StdioMCPConfig(command=sys.executable, args=[str(SERVER)])
    mcp = MCPClient("weather", True, config, on_sampling=sampler)
    call = tc("mcp__weather__forecast", {"city": "Oslo"}, id="c1")
    model = ScriptedChatModel([AssistantMsg("a", [call]), AssistantMsg("a", "ok")])
    rules = ["mcp__weather__forecast", "McpSample"]
    state = AgentState(permission_context=PermissionContext(allow_rules=rules))
    return Agent("bot", "p", model, toolkit=Toolkit(mcps=[mcp]), state=state)


async def _output(agent: Agent) -> str:
    async with agent.toolkit:
        events = [e async for e in agent.reply_stream(UserMsg("user", "go"))]
    [result] = tool_results(events)
    return str(result.output)


async def test_the_model_calls_the_tool_the_server_offers() -> None:
    seen: list[ChatRequest] = []

    def call_it(request: ChatRequest) -> AssistantMsg:
        seen.append(request)
        return AssistantMsg("a", [tc("get_weather", {"city": "Oslo"}, id="w1")])

    sampler = ModelSampler(ScriptedChatModel([call_it]), _yes)
    output = await _output(_agent(sampler))
    assert output == "called get_weather(Oslo) id=w1 stop=toolUse"
    [asked] = seen
    assert [t["name"] for t in asked.tools] == ["get_weather"]
    assert asked.tools[0]["parameters"]["required"] == ["city"]
    assert asked.tool_choice == "auto"
    assert sampler.answered == 1


def test_a_tool_result_joins_the_call_it_answers() -> None:
    """A follow-up request (the server ran the tool) reads as one call and its result."""
    request = SamplingRequest(
        server="weather",
        messages=[
            {"role": "user", "content": {"type": "text", "text": "Forecast for Oslo?"}},
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "w1",
                        "name": "get_weather",
                        "input": {"city": "Oslo"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "w1",
                        "content": [{"type": "text", "text": "sunny"}],
                    }
                ],
            },
        ],
        system_prompt=None,
        max_tokens=50,
        tools=[{"name": "get_weather", "inputSchema": {"type": "object"}}],
    )
    messages = to_messages(request)
    assert [m.role for m in messages] == ["system", "user", "assistant"]
    [call] = messages[2].get_content_blocks(ToolCallBlock)
    [result] = messages[2].get_content_blocks(ToolResultBlock)
    assert (call.id, call.name, call.input) == ("w1", "get_weather", '{"city": "Oslo"}')
    assert (result.id, result.name, result.output) == ("w1", "get_weather", "sunny")


async def test_a_model_that_does_not_call_the_tool_answers_in_text() -> None:
    sampler = ModelSampler(ScriptedChatModel([AssistantMsg("a", "Probably rain.")]), _yes)
    assert await _output(_agent(sampler)) == "no tool: Probably rain."
