"""What a server may see of us and we of it: environment, stderr, secrets in URLs."""

from __future__ import annotations

import json
import logging
import subprocess
import sys

import pytest
from mcp_testkit import call, edge_stdio, tools_of

from tether.errors import MCPConnectionError
from tether.mcp import HttpMCPConfig, MCPClient, StdioMCPConfig
from tether.message import ToolResultState


async def test_the_server_sees_only_a_minimal_environment_plus_its_config(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("TETHER_TEST_SECRET", "hunter2-do-not-leak")
    config = edge_stdio(env={"SERVER_TOKEN": "given-on-purpose"})
    async with MCPClient("edge", True, config) as client:
        tools = await tools_of(client)

        async def env(name: str) -> object:
            return json.loads((await call(tools, "mcp__edge__env", name=name)).output)

        assert await env("TETHER_TEST_SECRET") is None
        assert await env("SERVER_TOKEN") == "given-on-purpose"
        assert await env("PATH")  # enough to run programs


async def test_server_stderr_goes_to_a_bounded_log_not_our_terminal(
    capfd: pytest.CaptureFixture[str], caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.INFO, logger="tether.mcp.stderr"):
        async with MCPClient("edge", True, edge_stdio()) as client:
            tools = await tools_of(client)
            assert (await call(tools, "mcp__edge__stderr", lines=5000)).output == "wrote"
            # The session lives on (stderr is drained, so the server never blocks on it).
            assert (await call(tools, "mcp__edge__stderr", lines=5000)).output == "wrote"
    assert "noise line" not in capfd.readouterr().err
    logged = [r.getMessage() for r in caplog.records if r.name == "tether.mcp.stderr"]
    assert any("[edge] noise line 0 " in m for m in logged)
    assert len(logged) <= 201
    assert sum(len(m) for m in logged) < 100_000
    assert "the rest is not logged" in logged[-1]


async def test_a_server_that_fails_to_start_says_why_from_its_stderr(
    capfd: pytest.CaptureFixture[str],
) -> None:
    # (Built at run time, so the message can't just be quoting the command line.)
    crash = "import sys; sys.stderr.write('config error: ' + 'WIDGET' + '_KEY is not set\\n'); sys.exit(3)"
    client = MCPClient("widgets", True, StdioMCPConfig(command=sys.executable, args=["-c", crash]))
    with pytest.raises(MCPConnectionError, match="WIDGET_KEY is not set") as caught:
        await client.connect()
    assert "'widgets'" in str(caught.value)
    assert "WIDGET_KEY" not in capfd.readouterr().err


async def test_secrets_in_urls_and_headers_stay_out_of_errors_and_results(
    http_server: tuple[subprocess.Popen[str], str],
) -> None:
    down = HttpMCPConfig(url="http://127.0.0.1:9/mcp?key=SECRET-KEY-1234&lang=en", timeout=5)
    with pytest.raises(MCPConnectionError) as caught:
        await MCPClient("maps", True, down).connect()
    message = str(caught.value)
    assert "SECRET-KEY-1234" not in message
    assert "127.0.0.1:9/mcp?key=***&lang=***" in message

    proc, url = http_server
    config = HttpMCPConfig(
        url=f"{url}?key=SECRET-KEY-5678",
        headers={"Authorization": "Bearer TOKEN-abcdef"},
        timeout=5,
    )
    async with MCPClient("web", True, config) as client:
        tools = await tools_of(client)
        assert (await call(tools, "mcp__web__echo", text="up")).output == "echo: up"
        proc.kill()
        proc.wait()
        for _ in range(2):  # lost in flight, then cannot reconnect
            result = await call(tools, "mcp__web__echo", text="down")
            assert result.state is ToolResultState.ERROR
            assert "SECRET-KEY-5678" not in result.output  # the model never sees the key
    assert "key=***" in result.output
    assert "TOKEN-abcdef" not in repr(config) and "SECRET" not in repr(
        edge_stdio(env={"A": "SECRET"})
    )
