"""Interrupting a call (the reply is cancelled) sends `notifications/cancelled`: the
server's handler is cancelled too, and the session stays usable."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from mcp_testkit import FirstProgress, call, tools_of

from tether.mcp import MCPClient, StdioMCPConfig

FEATURES = Path(__file__).parent / "servers" / "features_server.py"


def _read(fifo: Path) -> str:
    with fifo.open() as pipe:  # blocks until the server writes its marker
        return pipe.read()


async def test_cancelling_a_call_cancels_it_on_the_server(tmp_path: Path) -> None:
    fifo = tmp_path / "marker"
    os.mkfifo(fifo)
    config = StdioMCPConfig(command=sys.executable, args=[str(FEATURES), "--marker", str(fifo)])
    async with MCPClient("feat", True, config) as client:
        tools = await tools_of(client)
        progress = FirstProgress()
        running = asyncio.create_task(call(tools, "mcp__feat__wait", progress.context))
        marker = asyncio.create_task(asyncio.to_thread(_read, fifo))
        try:
            await progress.started.wait()  # the server's handler is running
            running.cancel()
            async with asyncio.timeout(20):
                assert await marker == "cancelled"
        finally:
            if not marker.done():
                fifo.open("w").close()  # unblock the reader thread
                await asyncio.gather(marker, return_exceptions=True)
        assert running.cancelled()
        assert (await call(tools, "mcp__feat__chatty")).output == "logged"  # still usable


async def test_interrupting_a_reply_mid_call_cancels_the_server_call(tmp_path: Path) -> None:
    from tether.agent import Agent
    from tether.event import CustomEvent
    from tether.message import AssistantMsg, UserMsg
    from tether.model import ScriptedChatModel
    from tether.tool import Toolkit

    fifo = tmp_path / "marker"
    os.mkfifo(fifo)
    config = StdioMCPConfig(command=sys.executable, args=[str(FEATURES), "--marker", str(fifo)])
    client = MCPClient("feat", True, config, trust_annotations=True)
    call_wait = ScriptedChatModel.tool_call("mcp__feat__wait", {}, id="w")
    model = ScriptedChatModel([AssistantMsg("a", [call_wait])])
    started = asyncio.Event()

    async def run(agent: Agent) -> None:
        async for event in agent.reply_stream(UserMsg("user", "wait")):
            if isinstance(event, CustomEvent) and event.name == "mcp_progress":
                started.set()

    async with Toolkit(mcps=[client]) as toolkit:
        agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
        reply = asyncio.create_task(run(agent))
        marker = asyncio.create_task(asyncio.to_thread(_read, fifo))
        try:
            await started.wait()  # the tool runs on the server
            reply.cancel()  # the user interrupts the reply
            async with asyncio.timeout(20):
                assert await marker == "cancelled"
        finally:
            if not marker.done():
                fifo.open("w").close()
                await asyncio.gather(marker, return_exceptions=True)
            await asyncio.gather(reply, return_exceptions=True)
        assert reply.cancelled()
