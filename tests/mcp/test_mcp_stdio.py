"""MCPClient against the demo server over stdio: tools, permissions, progress, errors, caching."""

from __future__ import annotations

import json
import logging
import os
import signal
import sys
import time

import pytest
from mcp_testkit import Recorder, call, demo_stdio, tools_of

from tether.errors import ConfigError, MCPConnectionError
from tether.event import CustomEvent
from tether.mcp import HttpMCPConfig, MCPClient, MCPTool, StdioMCPConfig
from tether.message import ToolResultState
from tether.permission import PermissionBehavior, PermissionContext, PermissionEngine


async def test_tools_are_named_per_server_keep_their_schema_and_read_only_hint() -> None:
    async with MCPClient("demo", True, demo_stdio(), trust_annotations=True) as client:
        tools = await tools_of(client)
        assert {"mcp__demo__echo", "mcp__demo__write_note", "mcp__demo__slow"} <= set(tools)
        echo = tools["mcp__demo__echo"]
        assert isinstance(echo, MCPTool) and echo.remote_name == "echo"
        schema = echo.json_schema()
        assert schema["name"] == "mcp__demo__echo"
        assert schema["description"] == "Repeat the text."
        assert schema["parameters"]["required"] == ["text"]
        assert schema["parameters"]["properties"]["text"]["type"] == "string"
        assert echo.is_read_only and echo.is_concurrency_safe
        assert not tools["mcp__demo__write_note"].is_read_only
        result = await call(tools, "mcp__demo__echo", text="hi")
        assert result.state is ToolResultState.SUCCESS and result.output == "echo: hi"


async def test_permissions_allow_read_only_and_ask_with_an_mcp_rule_otherwise() -> None:
    async with MCPClient("demo", True, demo_stdio(), trust_annotations=True) as client:
        tools = await tools_of(client)
        engine = PermissionEngine(PermissionContext())
        allowed = await engine.decide(tools["mcp__demo__echo"], {"text": "x"})
        assert allowed.behavior is PermissionBehavior.ALLOW
        asked = await engine.decide(tools["mcp__demo__write_note"], {"text": "x"})
        assert asked.behavior is PermissionBehavior.ASK
        assert [str(r) for r in asked.suggested_rules] == ["mcp__demo__write_note"]
        ruled = PermissionEngine(PermissionContext(allow_rules=["mcp__demo__write_note"]))
        decision = await ruled.decide(tools["mcp__demo__write_note"], {"text": "x"})
        assert decision.behavior is PermissionBehavior.ALLOW


async def test_progress_notifications_become_custom_events() -> None:
    rec = Recorder()
    async with MCPClient("demo", True, demo_stdio()) as client:
        result = await call(await tools_of(client), "mcp__demo__slow", rec.context, steps=3)
    assert result.output == "done after 3 steps"
    assert all(isinstance(e, CustomEvent) and e.name == "mcp_progress" for e in rec.events)
    assert [(e.data["progress"], e.data["total"]) for e in rec.events] == [(1, 3), (2, 3), (3, 3)]
    first = rec.events[0]
    assert first.reply_id == "reply-1" and first.data["tool_call_id"] == "call-1"
    assert first.data["tool"] == "mcp__demo__slow" and first.data["message"] == "step 1 of 3"


async def test_tool_errors_and_bad_arguments_become_error_results() -> None:
    async with MCPClient("demo", True, demo_stdio()) as client:
        tools = await tools_of(client)
        failed = await call(tools, "mcp__demo__fail", message="disk on fire")
        assert failed.state is ToolResultState.ERROR and "disk on fire" in failed.output
        bad = await call(tools, "mcp__demo__echo", wrong=1)
        assert bad.state is ToolResultState.ERROR and "text" in bad.output
        # The session survives both.
        assert (await call(tools, "mcp__demo__echo", text="still")).output == "echo: still"


async def test_a_call_over_execution_timeout_is_cancelled_and_reported() -> None:
    async with MCPClient("demo", True, demo_stdio(), execution_timeout=0.5) as client:
        tools = await tools_of(client)
        started = time.monotonic()
        result = await call(tools, "mcp__demo__hang")
        assert time.monotonic() - started < 5
        assert result.state is ToolResultState.ERROR
        assert "within 0.5s" in result.output and "execution_timeout" in result.output
        assert (await call(tools, "mcp__demo__echo", text="after")).output == "echo: after"


async def test_fifty_calls_cost_one_tools_list_round_trip() -> None:
    async with MCPClient("demo", True, demo_stdio()) as client:
        for i in range(50):
            tools = await tools_of(client)  # what the loop does at every step
            assert (await call(tools, "mcp__demo__echo", text=str(i))).output == f"echo: {i}"
        stats = json.loads((await call(await tools_of(client), "mcp__demo__stats")).output)
    assert stats["tools/list"] == 1
    assert stats["tools/call"] == 51
    assert client.list_requests == 1


async def test_list_changed_refreshes_the_cached_list_once() -> None:
    async with MCPClient("demo", True, demo_stdio()) as client:
        tools = await tools_of(client)
        assert "mcp__demo__gadget" not in tools
        assert (await call(tools, "mcp__demo__add_tool", name="gadget")).output == "added gadget"
        # The announcement arrives before the call's answer, so the next view sees it.
        tools = await tools_of(client)
        assert "mcp__demo__gadget" in tools
        assert (await call(tools, "mcp__demo__gadget")).output == "I am gadget"
        await tools_of(client)
        assert client.list_requests == 2


async def test_killed_server_the_next_calls_reconnect() -> None:
    async with MCPClient("demo", True, demo_stdio(), execution_timeout=10) as client:
        tools = await tools_of(client)
        pid = int((await call(tools, "mcp__demo__pid")).output)
        os.kill(pid, signal.SIGKILL)
        started = time.monotonic()
        first = await call(tools, "mcp__demo__pid")
        if first.state is ToolResultState.ERROR:  # lost in flight: say so, reconnect next time
            assert "connection to MCP server 'demo' was lost" in first.output
            first = await call(tools, "mcp__demo__pid")
        assert first.state is ToolResultState.SUCCESS
        assert int(first.output) != pid
        assert time.monotonic() - started < 10
        assert client.is_connected


async def test_killed_during_a_call_the_call_ends_at_once_with_a_clear_error() -> None:
    async with MCPClient("demo", True, demo_stdio(), execution_timeout=30) as client:
        tools = await tools_of(client)
        pid = int((await call(tools, "mcp__demo__pid")).output)
        rec = Recorder()

        async def kill_on_first_progress(event: object) -> None:
            os.kill(pid, signal.SIGKILL)

        rec.context.emit = kill_on_first_progress
        started = time.monotonic()
        result = await call(tools, "mcp__demo__slow", rec.context, steps=100000)
        assert time.monotonic() - started < 10  # not the 30s execution_timeout
        assert result.state is ToolResultState.ERROR
        assert "lost during the call" in result.output
        assert (await call(tools, "mcp__demo__echo", text="back")).output == "echo: back"


async def test_enable_and_disable_tools_filter_and_explain() -> None:
    client = MCPClient(
        "demo", True, demo_stdio(), enable_tools=["echo", "fail", "pid"], disable_tools=["pid"]
    )
    async with client:
        assert set(await tools_of(client)) == {"mcp__demo__echo", "mcp__demo__fail"}
        hint = client.unavailable_hint("mcp__demo__pid", None)
        assert hint is not None and "disabled" in hint
        assert client.unavailable_hint("mcp__other__pid", None) is None


async def test_stateless_client_opens_a_session_per_operation() -> None:
    client = MCPClient("demo", False, demo_stdio())
    tools = await tools_of(client)
    first = await call(tools, "mcp__demo__pid")
    second = await call(tools, "mcp__demo__pid")
    assert first.output != second.output  # each call spawned its own server process
    assert not client.is_connected
    assert await tools_of(client) is not None and client.list_requests == 1
    await client.on_reply_end(None, "r1")  # stateless: listed again next reply
    await tools_of(client)
    assert client.list_requests == 2


async def test_unreachable_server_is_an_error_naming_it() -> None:
    bad = StdioMCPConfig(command=sys.executable, args=["-c", "import sys; sys.exit(3)"])
    client = MCPClient("ghost", True, bad)
    with pytest.raises(MCPConnectionError, match="'ghost'"):
        await client.list_tools(None)
    missing = MCPClient("nowhere", True, StdioMCPConfig(command="/no/such/binary"))
    with pytest.raises(MCPConnectionError, match="'nowhere'.*is_optional"):
        await missing.connect()
    http = MCPClient("down", False, HttpMCPConfig(url="http://127.0.0.1:9/mcp", timeout=5))
    with pytest.raises(MCPConnectionError, match="'down'.*127.0.0.1:9"):
        await http.list_tools(None)


async def test_optional_unreachable_server_warns_and_offers_no_tools(
    caplog: pytest.LogCaptureFixture,
) -> None:
    bad = StdioMCPConfig(command="/no/such/binary")
    client = MCPClient("ghost", True, bad, is_optional=True)
    with caplog.at_level(logging.WARNING, logger="tether.mcp"):
        assert await client.list_tools(None) == []
        assert await client.list_tools(None) == []  # not retried within the reply
    assert sum("'ghost'" in r.getMessage() for r in caplog.records) == 1
    hint = client.unavailable_hint("mcp__ghost__anything", None)
    assert hint is not None and "unavailable" in hint


def test_bad_configuration_fails_at_construction() -> None:
    with pytest.raises(ConfigError, match="letters, digits"):
        MCPClient("my server", True, demo_stdio())
    with pytest.raises(ConfigError, match="mcp_config"):
        MCPClient("s", True, {"command": "x"})  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="execution_timeout"):
        MCPClient("s", True, demo_stdio(), execution_timeout=0)
    with pytest.raises(ValueError, match="http"):
        HttpMCPConfig(url="ftp://x")
    with pytest.raises(ValueError, match="extra"):
        HttpMCPConfig(url="http://x", headerz={})  # type: ignore[call-arg]
