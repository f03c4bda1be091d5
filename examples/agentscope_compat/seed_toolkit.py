"""What it shows: a toolkit with built-in tools, an MCP server and a skills folder.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The specification points `HttpMCPConfig` at a hosted map service; here the URL comes from
`AMAP_MCP_URL` if set, otherwise the script starts a small local MCP server (itself, with
`--serve`) offering a `maps_weather` tool over HTTP on 127.0.0.1. The scripted model opens
the `weather` skill from `./skills`, then calls the MCP tool.

Run it: `python examples/agentscope_compat/seed_toolkit.py` (no network needed).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tether.agent import Agent
from tether.mcp import HttpMCPConfig, MCPClient
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Bash, Edit, Grep, Read, Toolkit, Write

SKILL = """---
name: weather
description: Answer weather questions with the amap MCP tools.
---

Call `mcp__amap__maps_weather` with the city name, then answer in one sentence.
"""


def serve() -> None:
    """A stand-in for the amap server: one read-only weather tool, streamable HTTP."""
    import socket

    import uvicorn
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("amap-local", log_level="WARNING")

    @server.tool(
        description="Weather for a city.", annotations=ToolAnnotations(read_only_hint=True)
    )
    def maps_weather(city: str) -> str:
        return f"{city}: sunny, 21°C"

    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(16)
    print(f"PORT {sock.getsockname()[1]}", flush=True)
    config = uvicorn.Config(server.streamable_http_app(), log_level="warning")
    uvicorn.Server(config).run(sockets=[sock])


def build_agent(url: str) -> Agent:
    model = ScriptedChatModel(
        [
            AssistantMsg("assistant", [ScriptedChatModel.tool_call("Skill", {"name": "weather"})]),
            AssistantMsg(
                "assistant",
                [ScriptedChatModel.tool_call("mcp__amap__maps_weather", {"city": "Hangzhou"})],
            ),
            AssistantMsg("assistant", "It is sunny and 21°C in Hangzhou."),
        ]
    )
    # The seed sample, with the model and the URL swapped:
    return Agent(
        name="my_agent",
        system_prompt="You are an AI assistant.",
        model=model,
        toolkit=Toolkit(
            tools=[Bash(), Edit(), Grep(), Read(), Write()],
            mcps=[
                MCPClient(
                    name="amap",
                    is_stateful=False,
                    mcp_config=HttpMCPConfig(url=url),
                    # Our local stand-in: trust its `readOnlyHint` (without this, as in
                    # the seed, each call of an MCP tool asks for confirmation first).
                    trust_annotations=True,
                ),
            ],
            skills_or_loaders=["./skills"],
        ),
    )


async def run(url: str) -> None:
    agent = build_agent(url)
    result = await agent.reply(UserMsg(name="user", content="What's the weather in Hangzhou?"))
    for block in result.tool_results:
        print(f"[{block.name}] {block.get_text().splitlines()[0]}")
    print(result.get_text_content())


def main() -> None:
    if "--serve" in sys.argv:
        serve()
        return
    script = os.path.abspath(__file__)
    with tempfile.TemporaryDirectory() as tmp:
        _in_workdir(Path(tmp), script)


def _in_workdir(workdir: Path, script: str) -> None:
    (workdir / "skills" / "weather").mkdir(parents=True)
    (workdir / "skills" / "weather" / "SKILL.md").write_text(SKILL, encoding="utf-8")
    os.chdir(workdir)  # `./skills`, as in the seed
    url = os.environ.get("AMAP_MCP_URL")
    if url:
        asyncio.run(run(url))
        return
    server = subprocess.Popen(
        [sys.executable, script, "--serve"], stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        port = int(server.stdout.readline().split()[1])
        asyncio.run(run(f"http://127.0.0.1:{port}/mcp"))
    finally:
        server.kill()
        server.wait()


if __name__ == "__main__":
    main()
