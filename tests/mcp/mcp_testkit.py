"""Helpers shared by the MCP tests (the demo server's config, calling tools as the runner does)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tether.mcp import StdioMCPConfig
from tether.permission import PermissionContext
from tether.tool import ToolContext, validate_arguments

SERVER = Path(__file__).parent / "servers" / "demo_server.py"


def demo_stdio() -> StdioMCPConfig:
    return StdioMCPConfig(command=sys.executable, args=[str(SERVER)])


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
