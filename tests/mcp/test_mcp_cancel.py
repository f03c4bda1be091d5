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
