"""MCP servers: tools from a Model Context Protocol server, next to your own.

`MCPClient(name, is_stateful, mcp_config)` connects to a server over stdio
(`StdioMCPConfig(command, args)`: the server runs as a subprocess) or HTTP
(`HttpMCPConfig(url)`); pass it as `Toolkit(mcps=[...])`. Its tools are offered to the model
as `mcp__<name>__<tool>`, which is also the name permission rules use. A stateful client
keeps one session open: open and close it with `async with`.

A server's tool annotations (`readOnlyHint`, …) are the server's claims: by default tether
asks before every MCP call unless a rule allows it. `trust_annotations=True` lets a server
you trust — like this one, which is this very file — have its read-only tools run without
asking.

This script is its own MCP server: run with `--serve`, it speaks MCP on stdin/stdout with
the official `mcp` SDK (`pip install 'tether[mcp]'`).

Run it: `python examples/mcp_servers.py` (offline).
"""

import asyncio
import sys

from tether.agent import Agent
from tether.mcp import MCPClient, StdioMCPConfig
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit


def serve() -> None:
    """A tiny MCP server with one read-only tool."""
    from mcp.server.mcpserver import MCPServer
    from mcp.types import ToolAnnotations

    server = MCPServer("clock", log_level="WARNING")

    @server.tool(
        description="The time in a city.", annotations=ToolAnnotations(read_only_hint=True)
    )
    def city_time(city: str) -> str:
        return f"It is 09:30 in {city}."

    server.run("stdio")


async def main() -> None:
    clock = MCPClient(
        name="clock",
        is_stateful=True,
        mcp_config=StdioMCPConfig(command=sys.executable, args=[__file__, "--serve"]),
        trust_annotations=True,  # our own server: its readOnlyHint may auto-allow the call
    )
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "assistant",
                [ScriptedChatModel.tool_call("mcp__clock__city_time", {"city": "Tokyo"})],
            ),
            AssistantMsg("assistant", "It is 09:30 in Tokyo."),
        ]
    )
    async with clock:
        agent = Agent(
            name="assistant",
            system_prompt="You tell the time.",
            model=model,
            toolkit=Toolkit(mcps=[clock]),
        )
        msg = await agent.reply(UserMsg("user", "What time is it in Tokyo?"))
    print("tools offered:", [t["name"] for t in model.calls[0].tools])
    print("tool said:", msg.tool_results[0].get_text())
    print(msg.get_text_content())


if __name__ == "__main__":
    if "--serve" in sys.argv:
        serve()
    else:
        asyncio.run(main())
