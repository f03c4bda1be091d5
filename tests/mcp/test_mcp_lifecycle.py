"""MCPClient lifecycle with real servers: close, use after close, handshake timeouts,
calls interrupted by close or cancellation, servers that go away (checked with real pids)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_testkit import (
    EDGE,
    SERVER,
    FirstProgress,
    call,
    demo_stdio,
    edge_stdio,
    is_gone,
    processes_with,
    tools_of,
)

from tether.agent import Agent
from tether.errors import MCPConnectionError, MCPError
from tether.event import ToolResultEndEvent
from tether.mcp import HttpMCPConfig, MCPClient, StdioMCPConfig
from tether.message import AssistantMsg, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit

tc = ScriptedChatModel.tool_call


def other_tasks() -> set[asyncio.Task[Any]]:
    return asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]


def mute(tmp_path: Path, timeout: float) -> tuple[StdioMCPConfig, Path]:
    pidfile = tmp_path / "mute.pid"
    config = StdioMCPConfig(
        command=sys.executable, args=[str(EDGE), "--mute", str(pidfile)], timeout=timeout
    )
    return config, pidfile


async def test_connect_and_close_twice_then_use_after_close_is_a_clear_error() -> None:
    client = MCPClient("edge", True, edge_stdio())
    await client.connect()
    await client.connect()  # the same session
    tools = await tools_of(client)
    pid = int((await call(tools, "mcp__edge__pid")).output)
    assert int((await call(tools, "mcp__edge__pid")).output) == pid
    await client.aclose()
    await client.aclose()
    assert is_gone(pid)
    with pytest.raises(MCPError, match="'edge' is closed"):
        await client.list_tools(None)
    with pytest.raises(MCPError, match="'edge' is closed"):
        await client.connect()
    # A call the model makes through a toolkit that was closed: an error result, and no
    # new server process behind the user's back.
    result = await call(tools, "mcp__edge__pid")
    assert result.state is ToolResultState.ERROR and "closed" in result.output
    assert not client.is_connected
    assert processes_with(str(EDGE)) == []


async def test_a_server_that_never_answers_the_handshake_times_out_and_is_killed(
    tmp_path: Path,
) -> None:
    config, pidfile = mute(tmp_path, timeout=1)
    client = MCPClient("mute", True, config)
    started = time.monotonic()
    with pytest.raises(MCPConnectionError, match="'mute'.*handshake within 1"):
        await client.connect()
    assert time.monotonic() - started < 10  # the SDK's bounded shutdown, not a hang
    if pidfile.exists():
        assert is_gone(int(pidfile.read_text()))  # killed and reaped: no zombie
    assert processes_with(str(pidfile)) == []
    assert other_tasks() == set()  # no owner task left behind


async def test_a_stateless_server_that_never_answers_fails_the_call_in_time(
    tmp_path: Path,
) -> None:
    config, pidfile = mute(tmp_path, timeout=1)
    client = MCPClient("mute", False, config)
    with pytest.raises(MCPConnectionError, match="'mute'"):
        await client.list_tools(None)
    assert processes_with(str(pidfile)) == []
    assert other_tasks() == set()


async def test_close_while_a_call_is_in_flight_ends_the_call_with_a_closed_error() -> None:
    client = MCPClient("demo", True, demo_stdio())
    tools = await tools_of(client)
    pid = int((await call(tools, "mcp__demo__pid")).output)
    probe = FirstProgress()
    task = asyncio.create_task(call(tools, "mcp__demo__slow", probe.context, steps=100000))
    await probe.started.wait()
    await client.aclose()
    result = await task
    assert result.state is ToolResultState.ERROR
    assert "closed while the call was running" in result.output
    assert "reconnect" not in result.output
    assert is_gone(pid)
    assert other_tasks() == set()


async def test_cancelling_a_stateful_call_cancels_it_on_the_server() -> None:
    async with MCPClient("demo", True, demo_stdio()) as client:
        tools = await tools_of(client)
        before = other_tasks()
        probe = FirstProgress()
        task = asyncio.create_task(call(tools, "mcp__demo__slow", probe.context, steps=100000))
        await probe.started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        stats = json.loads((await call(tools, "mcp__demo__stats")).output)
        assert stats["slow interrupted"] == 1  # the server stopped working on it
        assert (await call(tools, "mcp__demo__echo", text="on")).output == "echo: on"
        # Once later round trips are done, only the session's own tasks are left.
        assert other_tasks() == before


async def test_cancelling_a_stateless_call_stops_its_server_process() -> None:
    client = MCPClient("demo", False, demo_stdio())
    tools = await tools_of(client)
    probe = FirstProgress()
    task = asyncio.create_task(call(tools, "mcp__demo__slow", probe.context, steps=100000))
    await probe.started.wait()
    servers = processes_with(str(SERVER))
    assert len(servers) == 1
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert is_gone(servers[0])
    assert other_tasks() == set()


def _start_http(port: int = 0) -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--http", "--port", str(port)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert line.startswith("PORT "), line
    return proc, int(line.split()[1])


def _stop(proc: subprocess.Popen[str]) -> None:
    proc.kill()
    proc.wait()
    assert proc.stdout is not None
    proc.stdout.close()


async def test_an_http_server_restarted_on_its_port_is_reconnected() -> None:
    proc, port = _start_http()
    client = MCPClient("web", True, HttpMCPConfig(url=f"http://127.0.0.1:{port}/mcp", timeout=5))
    try:
        tools = await tools_of(client)
        assert int((await call(tools, "mcp__web__pid")).output) == proc.pid
        _stop(proc)
        down = await call(tools, "mcp__web__pid")
        assert down.state is ToolResultState.ERROR and "'web'" in down.output
        proc, _ = _start_http(port)
        first = await call(tools, "mcp__web__pid")
        if first.state is ToolResultState.ERROR:  # a drop noticed only now
            first = await call(tools, "mcp__web__pid")
        assert int(first.output) == proc.pid
    finally:
        await client.aclose()
        _stop(proc)


async def test_a_server_that_stops_mid_reply_gives_error_results_not_a_crash() -> None:
    """After a reconnect fails, the next step must not raise from listing the tools."""
    proc, port = _start_http()
    url = f"http://127.0.0.1:{port}/mcp"
    model = ScriptedChatModel(
        [AssistantMsg("a", [tc("mcp__web__echo", {"text": str(i)}, id=f"c{i}")]) for i in range(4)]
        + [AssistantMsg("a", "The server went away.")]
    )
    got: dict[str, Any] = {}
    try:
        web = MCPClient("web", True, HttpMCPConfig(url=url, timeout=5), trust_annotations=True)
        async with Toolkit(mcps=[web]) as tk:
            agent = Agent(name="bot", system_prompt="p", model=model, toolkit=tk)
            async for event in agent.reply_stream(UserMsg("user", "go")):
                if isinstance(event, ToolResultEndEvent):
                    got[event.block_id] = event.tool_result
                    if event.block_id == "c0":
                        _stop(proc)
    finally:
        if proc.poll() is None:
            _stop(proc)
    assert got["c0"].output == "echo: 0"
    for i in (1, 2, 3):
        assert got[f"c{i}"].state is ToolResultState.ERROR and "'web'" in got[f"c{i}"].output
    model.assert_complete()
