"""Helpers shared by the MCP tests (the demo server's config, calling tools as the runner does)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from tether.mcp import StdioMCPConfig
from tether.permission import PermissionContext
from tether.tool import ToolContext, validate_arguments

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


def demo_stdio() -> StdioMCPConfig:
    return StdioMCPConfig(command=sys.executable, args=[str(SERVER)])


EVERYTHING_BIN = (
    Path(__file__).resolve().parents[2] / ".ci" / ".mcp-conformance" / "node_modules" / ".bin"
)


def everything_stdio() -> StdioMCPConfig:
    """The reference everything-server (npm, Node 22): skipped when it is not installed
    (`tests/conformance/run.sh` installs it), failed when `TETHER_REQUIRE_NODE` is set."""
    import pytest

    server = EVERYTHING_BIN / "mcp-server-everything"
    if not server.exists():
        if os.environ.get("TETHER_REQUIRE_NODE"):
            pytest.fail("the everything-server is not installed: run tests/conformance/run.sh")
        pytest.skip("the everything-server is not installed (tests/conformance/run.sh)")
    return StdioMCPConfig(
        command=str(EVERYTHING_BIN / "node"),
        args=[str(server), "stdio"],
        env={"PATH": f"{EVERYTHING_BIN}:/usr/bin:/bin"},
    )


class Recorder:
    """A tool context that records the events a tool emits."""

    def __init__(self) -> None:
        self.events: list[Any] = []
        self.context = ToolContext(
            tool_call_id="call-1",
            reply_id="reply-1",
            permission_context=PermissionContext(),
            emit=self._emit,
        )

    async def _emit(self, event: Any) -> None:
        self.events.append(event)


async def call(
    tools: dict[str, Any], name: str, ctx: ToolContext | None = None, /, **args: Any
) -> Any:
    """Call a tool as the runner does (validate, then call) and return its result block."""
    tool = tools[name]
    context = ctx if ctx is not None else Recorder().context
    return await tool.call(validate_arguments(tool.input_model, args), context)


async def tools_of(client: Any) -> dict[str, Any]:
    return {t.name: t for t in await client.list_tools(None)}


EDGE = Path(__file__).parent / "servers" / "edge_server.py"


def edge_stdio(**kwargs: Any) -> StdioMCPConfig:
    return StdioMCPConfig(command=sys.executable, args=[str(EDGE)], **kwargs)


def processes_with(marker: str) -> list[int]:
    """Our child processes (zombies included) whose command line contains `marker`.

    (Only our own: other test runs on the machine start the same servers.)
    """
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
            status = (entry / "status").read_text()
        except OSError:
            continue  # gone meanwhile
        ppid = int(status.split("PPid:")[1].split()[0])
        zombie = "Z (zombie)" in status
        if ppid == os.getpid() and (marker in cmdline or zombie):
            found.append(int(entry.name))
    return found


def is_gone(pid: int) -> bool:
    """The process has exited and been reaped (no zombie left)."""
    return not Path(f"/proc/{pid}").exists()


class FirstProgress:
    """A tool context whose `started` event is set on the call's first progress report."""

    def __init__(self) -> None:
        import asyncio

        self.started = asyncio.Event()
        self.context = Recorder().context
        self.context.emit = self._emit

    async def _emit(self, event: Any) -> None:
        self.started.set()


LONG = "a" * 60 + "_" + "b" * 39
"""The 100-character tool name of the edge server."""
