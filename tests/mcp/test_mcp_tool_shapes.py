"""Awkward tools of a real server: names providers reject, schemas they reject, every
kind of result, name clashes, and many concurrent users of one client."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from mcp_testkit import LONG, call, demo_stdio, edge_stdio, tools_of

from tether.agent import Agent
from tether.errors import ConfigError, DuplicateToolError
from tether.event import ToolResultEndEvent
from tether.mcp import MCPClient
from tether.message import AssistantMsg, DataBlock, TextBlock, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool

PROVIDER_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
tc = ScriptedChatModel.tool_call


def by_remote(tools: dict[str, Any]) -> dict[str, Any]:
    return {t.remote_name: t for t in tools.values()}


async def test_names_providers_reject_are_made_valid_distinct_and_called_back() -> None:
    async with MCPClient("edge", True, edge_stdio()) as client:
        tools = await tools_of(client)
        remote = by_remote(tools)
        assert all(PROVIDER_NAME.match(name) for name in tools), sorted(tools)
        # Valid names are kept as they are.
        assert remote["get_weather"].name == "mcp__edge__get_weather"
        # `get.weather` would become `get_weather` too: it gets a stable suffix instead.
        dotted = remote["get.weather"].name
        assert dotted.startswith("mcp__edge__get_weather_") and dotted != "mcp__edge__get_weather"
        assert remote["wetter-läuft"].name.startswith("mcp__edge__wetter-l_uft_")
        assert len(remote[LONG].name) == 64
        assert len(tools) == len(remote)  # none lost to a clash
        for name in ("get.weather", "get_weather", "wetter-läuft", LONG):
            result = await call(tools, remote[name].name, text="x")
            assert result.output == f"I am {name}"  # each reaches its own server tool
    # The same name in another process or after a re-list: rules and paused calls hold.
    again = MCPClient("edge", False, edge_stdio())
    assert by_remote(await tools_of(again))["get.weather"].name == dotted


async def test_disabled_tools_with_changed_names_are_explained() -> None:
    client = MCPClient("edge", True, edge_stdio(), disable_tools=["get.weather"])
    async with client:
        tools = await tools_of(client)
        assert "get.weather" not in by_remote(tools)
        everything = MCPClient("edge", False, edge_stdio())
        hidden = by_remote(await tools_of(everything))["get.weather"].name
        hint = client.unavailable_hint(hidden, None)
        assert hint is not None and "disabled" in hint


def test_a_server_name_too_long_for_tool_names_fails_at_construction() -> None:
    with pytest.raises(ConfigError, match="1 to 40"):
        MCPClient("s" * 41, True, demo_stdio())


async def test_schemas_are_offered_in_a_shape_providers_accept() -> None:
    async with MCPClient("edge", True, edge_stdio()) as client:
        tools = by_remote(await tools_of(client))
        refs = tools["refs"].json_schema()["parameters"]
        assert refs["properties"]["at"] == {"$ref": "#/$defs/Point"}
        assert "Point" in refs["$defs"] and refs["required"] == ["at"]
        choice = tools["choice"].json_schema()
        assert choice["parameters"]["type"] == "object"
        assert "anyOf" not in choice["parameters"]  # Anthropic rejects it at the top level
        assert '"anyOf"' in choice["description"] and '"city"' in choice["description"]
        rooted = tools["rooted"].json_schema()["parameters"]
        assert "$ref" not in rooted and rooted["properties"] == {"q": {"type": "string"}}
        assert tools["bare"].json_schema()["parameters"] == {"type": "object", "properties": {}}
        # The arguments reach the server as given; it validates them against its schema.
        named = {t.name: t for t in tools.values()}
        refs_result = await call(named, "mcp__edge__refs", at={"x": 1, "y": 2})
        assert json.loads(refs_result.output) == {"at": {"x": 1, "y": 2}}
        choice_result = await call(named, "mcp__edge__choice", zip="10115")
        assert json.loads(choice_result.output) == {"zip": "10115"}
        odd = await call(named, "mcp__edge__bare", json=1, copy=2, model_config=3)
        assert json.loads(odd.output) == {"copy": 2, "json": 1, "model_config": 3}


async def test_results_of_every_kind() -> None:
    async with MCPClient("edge", True, edge_stdio()) as client:
        tools = await tools_of(client)
        image = await call(tools, "mcp__edge__image")
        assert isinstance(image.output, list)
        text, picture = image.output
        assert isinstance(text, TextBlock) and text.text == "a picture:"
        assert isinstance(picture, DataBlock) and picture.source.media_type == "image/png"
        resources = await call(tools, "mcp__edge__resources")
        # A PDF is not an image the providers take: a note says so.
        assert resources.output.splitlines() == [
            "[resource file:///notes/a.txt]",
            "note A",
            "[resource file:///data/b.bin (application/pdf)]",
            "[resource data of type application/pdf: not sent to the model (only PNG, JPEG, "
            "GIF and WebP images are)]",
        ]
        failed = await call(tools, "mcp__edge__is_error")
        assert failed.state is ToolResultState.ERROR and failed.output == "quota gone"
        structured = await call(tools, "mcp__edge__structured")
        assert json.loads(structured.output) == {"temp": 21, "unit": "C"}
        assert (await call(tools, "mcp__edge__both")).output == "21 C"
        huge = await call(tools, "mcp__edge__huge", size=5_000_000)
        assert huge.state is ToolResultState.SUCCESS and len(huge.output) == 5_000_000
        assert (await call(tools, "mcp__edge__pid")).state is ToolResultState.SUCCESS


async def test_clashing_names_are_a_clear_error_and_prefixes_keep_servers_apart() -> None:
    @tool
    def mcp__demo__echo(text: str) -> str:
        """A local tool that takes an MCP tool's name."""
        return text

    async with Toolkit(mcps=[MCPClient("demo", True, demo_stdio())], tools=[mcp__demo__echo]) as tk:
        with pytest.raises(DuplicateToolError, match="'mcp__demo__echo' from 'demo'"):
            await tk.view(None)
    twins = [MCPClient("demo", True, demo_stdio()), MCPClient("demo", True, demo_stdio())]
    async with Toolkit(mcps=twins) as tk:
        with pytest.raises(DuplicateToolError, match="rename one"):
            await tk.view(None)
    apart = [MCPClient("one", True, demo_stdio()), MCPClient("two", True, demo_stdio())]
    async with Toolkit(mcps=apart) as tk:
        view = await tk.view(None)
        assert {"mcp__one__echo", "mcp__two__echo"} <= set(view.tools)


async def test_concurrent_first_use_lists_once() -> None:
    async with MCPClient("demo", True, demo_stdio()) as client:
        client._tools = None  # as before the first view (connect listed already)
        await asyncio.gather(*[tools_of(client) for _ in range(5)])
        assert client.list_requests == 2
    stateless = MCPClient("demo", False, demo_stdio())
    await asyncio.gather(*[tools_of(stateless) for _ in range(5)])
    assert stateless.list_requests == 1


async def test_many_concurrent_calls_on_one_stdio_session() -> None:
    async with MCPClient("demo", True, demo_stdio()) as client:
        tools = await tools_of(client)
        echoes = [call(tools, "mcp__demo__echo", text=str(i)) for i in range(200)]
        slows = [call(tools, "mcp__demo__slow", steps=3) for _ in range(20)]
        results = await asyncio.gather(*echoes, *slows)
        assert [r.output for r in results[:200]] == [f"echo: {i}" for i in range(200)]
        assert all(r.output == "done after 3 steps" for r in results[200:])
        stats = json.loads((await call(tools, "mcp__demo__stats")).output)
        assert stats["tools/call"] == 221 and stats["tools/list"] == 1


async def test_two_agents_share_one_client_concurrently() -> None:
    client = MCPClient("demo", True, demo_stdio(), trust_annotations=True)

    def script(tag: str) -> ScriptedChatModel:
        calls = [tc("mcp__demo__echo", {"text": f"{tag}{i}"}, id=f"{tag}{i}") for i in range(5)]
        return ScriptedChatModel([AssistantMsg("a", calls), AssistantMsg("a", f"{tag} done")])

    async def run(agent: Agent) -> dict[str, Any]:
        got = {}
        async for event in agent.reply_stream(UserMsg("user", "go")):
            if isinstance(event, ToolResultEndEvent):
                got[event.block_id] = event.tool_result.output
        return got

    async with Toolkit(mcps=[client]) as tk:
        models = {tag: script(tag) for tag in ("a", "b")}
        agents = [Agent(name=t, system_prompt="p", model=m, toolkit=tk) for t, m in models.items()]
        got_a, got_b = await asyncio.gather(*(run(agent) for agent in agents))
    assert got_a == {f"a{i}": f"echo: a{i}" for i in range(5)}
    assert got_b == {f"b{i}": f"echo: b{i}" for i in range(5)}
    assert client.list_requests == 1
    for model in models.values():
        model.assert_complete()
