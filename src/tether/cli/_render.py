"""Render an agent's event stream in the terminal with rich."""

from __future__ import annotations

from typing import Any

from rich.markup import escape

from tether.cli._sanitize import visible
from tether.event import (
    AgentEvent,
    ContextCompressedEvent,
    ModelRetryEvent,
    PluginActivatedEvent,
    PluginSleptEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallEndEvent,
    ToolResultEndEvent,
)

__all__ = ["EventRenderer"]


def _safe(value: object) -> str:
    """Outside text inside rich markup: control characters visible, `[` escaped."""
    return escape(visible(str(value)))


class EventRenderer:
    """Prints events as they stream: text inline, tools and pauses as short lines."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self._inline = False

    def _line(self, text: str) -> None:
        if self._inline:
            self.console.print()
            self._inline = False
        self.console.print(text)

    def __call__(self, event: AgentEvent) -> None:  # one branch per event type
        """Show one event."""
        match event:
            case ReplyStartEvent():
                self._line(f"[bold cyan]▶ reply {event.reply_id}[/]")
            case TextBlockDeltaEvent() | ThinkingBlockDeltaEvent():
                style = "" if isinstance(event, TextBlockDeltaEvent) else "dim italic"
                self.console.print(
                    visible(event.delta), end="", style=style, markup=False, highlight=False
                )
                self._inline = True
            case ToolCallEndEvent():
                self._line(
                    f"[yellow]⚙ {_safe(event.tool_call.name)}[/] {_safe(event.tool_call.input)}"
                )
            case ToolResultEndEvent():
                result = event.tool_result
                colour = "green" if result.state == "success" else "red"
                text = result.get_text().replace("\n", " ⏎ ")
                self._line(f"  [{colour}]↳ {result.state}[/] {_safe(text[:120])}")
            case RequireUserConfirmEvent():
                names = _safe(", ".join(f"{c.name}({c.input})" for c in event.tool_calls))
                self._line(f"[bold magenta]⏸ waiting for confirmation:[/] {names}")
            case RequireExternalExecutionEvent():
                names = _safe(", ".join(c.name for c in event.tool_calls))
                self._line(f"[bold magenta]⏸ waiting for external results:[/] {names}")
            case ModelRetryEvent():
                self._line(
                    f"[red]↻ retry {event.attempt} of {_safe(event.model_name)}:[/] {_safe(event.error)}"
                )
            case PluginActivatedEvent() | PluginSleptEvent() | ContextCompressedEvent():
                detail = event.model_dump(exclude={"id", "created_at", "reply_id", "type"})
                self._line(f"[blue]• {event.type.value}[/] {_safe(detail)}")
            case ReplyEndEvent():
                self._line(f"[bold cyan]■ reply end[/] ({len(event.msg.content)} blocks)")
            case _:
                pass
