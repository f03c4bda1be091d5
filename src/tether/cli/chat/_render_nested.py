"""A sub-agent's events in the chat: indented lines under the call that started it."""

from __future__ import annotations

from rich.text import Text

from tether.cli._sanitize import visible
from tether.cli.chat._calls import call_summary
from tether.event import (
    ReplyEndEvent,
    ReplyStartEvent,
    SubAgentEvent,
    ToolCallEndEvent,
    ToolResultEndEvent,
)
from tether.message import ToolResultState

__all__ = ["nested_lines"]

_COLOURS = {ToolResultState.SUCCESS: "green", ToolResultState.DENIED: "yellow"}


def nested_lines(event: SubAgentEvent) -> list[Text]:
    """The lines one sub-agent event shows (none for its text: its answer is the result)."""
    indent = "    " * len(event.agent_path)
    who = " › ".join(visible(name) for name in event.agent_path)
    inner = event.event
    if isinstance(inner, ReplyStartEvent):
        return [Text(f"{indent[2:]}↳ {who} is working", style="dim cyan")]
    if isinstance(inner, ToolCallEndEvent):
        call = inner.tool_call
        line = Text(f"{indent}● ", style="cyan")
        line.append(visible(call.name), style="bold")
        line.append(f"({visible(call_summary(call))})")
        return [line]
    if isinstance(inner, ToolResultEndEvent):
        result = inner.tool_result
        detail = " ".join(visible(result.get_text()).split())
        line = Text(f"{indent}  ⎿ ", style="dim")
        line.append(result.state.value, style=_COLOURS.get(result.state, "red"))
        line.append(" " + (detail if len(detail) <= 100 else detail[:99] + "…"))
        return [line]
    if isinstance(inner, ReplyEndEvent):
        return [Text(f"{indent[2:]}✓ {who} finished", style="dim cyan")]
    return []
