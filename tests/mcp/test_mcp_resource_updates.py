"""An attached resource follows its server's `resources/updated`: after the server says
it changed, the next model request carries the new text (`servers/live_server.py`, a real
MCP server over stdio)."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from tether.agent import Agent
from tether.mcp import MCPClient, StdioMCPConfig
from tether.message import AssistantMsg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.permission import PermissionContext
from tether.state import AgentState
from tether.testing import tool_results
from tether.tool import Toolkit

SERVER = Path(__file__).parent / "servers" / "live_server.py"
URI = "note://live"


def _text(request: ChatRequest) -> str:
    return "\n".join(m.get_text_content() or "" for m in request.messages)


def _announced(client: MCPClient) -> bool:
    return URI in client.changed_resources or client.attached_resources[URI] == "v2 fresh"


async def test_the_next_request_sees_the_updated_resource() -> None:
    seen: list[str] = []

    def answer(request: ChatRequest) -> AssistantMsg:
        seen.append(_text(request))
        return AssistantMsg("a", "ok")

    bump = ScriptedChatModel.tool_call("mcp__live__bump", {"text": "v2 fresh"}, id="b1")

    def call_bump(request: ChatRequest) -> AssistantMsg:
        seen.append(_text(request))
        return AssistantMsg("a", [bump])

    model = ScriptedChatModel([call_bump, AssistantMsg("a", "bumped"), answer, answer])
    client = MCPClient("live", True, StdioMCPConfig(command=sys.executable, args=[str(SERVER)]))
    state = AgentState(permission_context=PermissionContext(allow_rules=["mcp__live__bump"]))
    agent = Agent("bot", "p", model, toolkit=Toolkit(mcps=[client]), state=state)
    async with agent.toolkit:
        assert await client.attach_resource(URI) == "v1"
        events = [e async for e in agent.reply_stream(UserMsg("user", "bump it"))]
        assert [r.output for r in tool_results(events)] == ["bumped"]
        # The announcement travels on its own stream: it may land before the reply's last
        # request (which then read the note again) or after it (the next one will).
        deadline = time.monotonic() + 10
        while not _announced(client) and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        assert _announced(client)
        [e async for e in agent.reply_stream(UserMsg("user", "and now?"))]
        assert client.attached_resources == {URI: "v2 fresh"}
        assert not client.changed_resources
        client.detach_resource(URI)
        [e async for e in agent.reply_stream(UserMsg("user", "gone?"))]
    before, after, detached = seen
    assert f'<resource server="live" uri="{URI}">\nv1\n</resource>' in before
    assert "v2 fresh" not in before
    assert f'<resource server="live" uri="{URI}">\nv2 fresh\n</resource>' in after
    assert "v1\n</resource>" not in after
    assert "<resource" not in detached


async def test_a_resource_of_a_server_that_cannot_announce_is_read_once() -> None:
    features = Path(__file__).parent / "servers" / "features_server.py"
    config = StdioMCPConfig(command=sys.executable, args=[str(features)])
    async with MCPClient("feat", True, config) as client:
        text = await client.attach_resource("note://greeting")
        assert text == "Hello from a resource."
        prompt = await client.prompt(AgentState())
        assert prompt is not None and "Hello from a resource." in prompt.dynamic
