"""MCPClient against the demo server over streamable HTTP (and legacy SSE) on 127.0.0.1."""

from __future__ import annotations

import json
import subprocess
import time
from typing import Any

from mcp_testkit import Recorder, call, tools_of

from tether.event import CustomEvent
from tether.mcp import HttpMCPConfig, MCPClient
from tether.message import ToolResultState


async def stats(url: str) -> dict[str, Any]:
    """The server's request counts, read over a throwaway session (one list, one call)."""
    probe = MCPClient("probe", False, HttpMCPConfig(url=url))
    counts: dict[str, Any] = json.loads(
        (await call(await tools_of(probe), "mcp__probe__stats")).output
    )
    return counts


def delta(before: dict[str, Any], after: dict[str, Any], *methods: str) -> int:
    return sum(after.get(m, 0) - before.get(m, 0) for m in methods)


async def test_stateful_http_tools_progress_errors_and_timeouts(http_url: str) -> None:
    rec = Recorder()
    client = MCPClient(
        "web", True, HttpMCPConfig(url=http_url), execution_timeout=1, trust_annotations=True
    )
    async with client:
        tools = await tools_of(client)
        assert tools["mcp__web__echo"].is_read_only
        assert not tools["mcp__web__write_note"].is_read_only
        assert (await call(tools, "mcp__web__echo", text="hi")).output == "echo: hi"
        done = await call(tools, "mcp__web__slow", rec.context, steps=2)
        assert done.output == "done after 2 steps"
        assert [e.data["progress"] for e in rec.events if isinstance(e, CustomEvent)] == [1, 2]
        failed = await call(tools, "mcp__web__fail", message="nope")
        assert failed.state is ToolResultState.ERROR and "nope" in failed.output
        hung = await call(tools, "mcp__web__hang")
        assert hung.state is ToolResultState.ERROR and "within 1s" in hung.output
        assert (await call(tools, "mcp__web__echo", text="after")).output == "echo: after"


async def test_fifty_http_calls_cost_one_tools_list_round_trip(http_url: str) -> None:
    before = await stats(http_url)
    async with MCPClient("web", True, HttpMCPConfig(url=http_url)) as client:
        for i in range(50):
            tools = await tools_of(client)
            assert (await call(tools, "mcp__web__echo", text=str(i))).output == f"echo: {i}"
    after = await stats(http_url)
    assert delta(before, after, "tools/list") == 1 + 1  # ours, and the second probe's
    assert delta(before, after, "tools/call") == 50 + 1
    assert client.list_requests == 1


async def test_list_changed_over_http(http_url: str) -> None:
    async with MCPClient("web", True, HttpMCPConfig(url=http_url)) as client:
        tools = await tools_of(client)
        assert "mcp__web__widget" not in tools
        await call(tools, "mcp__web__add_tool", name="widget")
        tools = await tools_of(client)
        assert (await call(tools, "mcp__web__widget")).output == "I am widget"
        assert client.list_requests == 2


async def test_stateless_http_opens_a_session_per_call_and_lists_once_per_reply(
    http_url: str,
) -> None:
    client = MCPClient("web", False, HttpMCPConfig(url=http_url))
    before = await stats(http_url)
    tools = await tools_of(client)
    for i in range(3):
        assert (await call(tools, "mcp__web__echo", text=str(i))).output == f"echo: {i}"
        assert await tools_of(client)  # cached within the reply
    after = await stats(http_url)
    # A session each: our list, our three calls, the second probe's list and call. One list
    # each for us and the probe: a fresh session is handed the cached listing, so calls
    # do not list again.
    assert delta(before, after, "initialize", "server/discover") == 1 + 3 + 2
    assert delta(before, after, "tools/list") == 1 + 1
    assert client.list_requests == 1


async def test_legacy_sse_server_is_reached_by_fallback_or_by_choice(sse_server: str) -> None:
    for transport in ("auto", "sse"):
        client = MCPClient("old", True, HttpMCPConfig(url=sse_server, transport=transport))
        async with client:
            tools = await tools_of(client)
            assert (
                await call(tools, "mcp__old__echo", text=transport)
            ).output == f"echo: {transport}"


async def test_killed_http_server_gives_a_clear_error_without_hanging(
    http_server: tuple[subprocess.Popen[str], str],
) -> None:
    proc, url = http_server
    client = MCPClient("web", True, HttpMCPConfig(url=url, timeout=5), execution_timeout=10)
    async with client:
        tools = await tools_of(client)
        assert (await call(tools, "mcp__web__echo", text="up")).output == "echo: up"
        proc.kill()
        proc.wait()
        started = time.monotonic()
        for _ in range(2):  # the first may be lost in flight; the second cannot reconnect
            result = await call(tools, "mcp__web__echo", text="down")
            assert result.state is ToolResultState.ERROR
        assert "'web'" in result.output
        assert time.monotonic() - started < 15
