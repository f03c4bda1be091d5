"""The screen side of the chat: every `AgentEvent` becomes terminal output (rich).

Text streams as Markdown (redrawn in place while it grows), thinking streams dimmed and
folds into one line when it ends, tool calls show compactly (an Edit or Write with a
coloured diff), Bash output streams as it comes.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.live import Live
from rich.markdown import Markdown
from rich.markup import escape
from rich.segment import Segment
from rich.text import Text

from tether.cli._sanitize import visible
from tether.cli.chat._calls import call_diff, call_summary
from tether.cli.chat._render_nested import nested_lines
from tether.event import (
    AgentEvent,
    ContextCompressedEvent,
    ModelRetryEvent,
    PluginActivatedEvent,
    PluginSleptEvent,
    SubAgentEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallEndEvent,
    ToolResultEndEvent,
    ToolResultTextDeltaEvent,
)
from tether.message import ToolResultState

__all__ = ["ChatRenderer", "safe"]

_REFRESH = 0.05
"""Seconds between two redraws of a growing block."""
_RESULT_COLOURS = {ToolResultState.SUCCESS: "green", ToolResultState.DENIED: "yellow"}
_DIFF_STYLES = {"-": "red", "+": "green"}


def safe(value: object) -> str:
    """`value` as text to put inside rich markup: control characters visible, `[` escaped."""
    return escape(visible(str(value)))


class _Tail:
    """The last lines of a renderable that fit on the screen, `keep` lines spare."""

    def __init__(self, renderable: Any, keep: int = 2) -> None:
        self.renderable = renderable
        self.keep = keep

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = console.render_lines(self.renderable, options, pad=False)
        for line in lines[-max(console.size.height - self.keep, 1) :]:
            yield from line
            yield Segment.line()


class ChatRenderer:
    """Shows events as they stream; `close()` ends whatever block is still open."""

    def __init__(self, console: Console, cwd: Path) -> None:
        self.console = console
        self.cwd = cwd
        self._live: Live | None = None
        self._text = ""
        self._drawn = 0.0
        self._streamed: set[str] = set()
        self._at_line_start = True

    def __call__(self, event: AgentEvent) -> None:
        """Show one event."""
        match event:
            case TextBlockStartEvent() | ThinkingBlockStartEvent():
                self._open(thinking=isinstance(event, ThinkingBlockStartEvent))
            case TextBlockDeltaEvent() | ThinkingBlockDeltaEvent():
                self._grow(event.delta)
            case TextBlockEndEvent():
                self.close()
            case ThinkingBlockEndEvent():
                words = len(self._text.split())
                self.close(keep=False)
                self.console.print(f"[dim]✻ thought for {words} words[/]", highlight=False)
            case ToolCallEndEvent():
                self._call(event)
            case ToolResultTextDeltaEvent():
                self._output(event.block_id, event.delta)
            case ToolResultEndEvent():
                self._result(event)
            case ModelRetryEvent():
                self.note(
                    f"[yellow]↻ {safe(event.model_name)} failed ({safe(event.error)}); retrying[/]"
                )
            case ContextCompressedEvent():
                self.note(
                    f"[blue]• context compressed: {event.before_tokens} → "
                    f"{event.after_tokens} tokens[/]"
                )
            case PluginActivatedEvent():
                self.note(
                    f"[blue]• plugin {safe(event.module_name)} awake ({event.rounds_left} rounds)[/]"
                )
            case PluginSleptEvent():
                self.note(f"[blue]• plugin {safe(event.module_name)} asleep[/]")
            case SubAgentEvent():
                self._nested(event)
            case _:
                pass

    def note(self, markup: str) -> None:
        """A line of its own (closing an open block first)."""
        self.close()
        self._line_break()
        self.console.print(markup, highlight=False)

    def queued(self, markup: str) -> None:
        """A line above whatever is streaming, without ending it (a growing block stays)."""
        if self._live is None:
            self._line_break()
        self.console.print(markup, highlight=False)

    def typing(self, line: str) -> None:
        """Draw `line` (typed during the reply) below the stream; "" removes it."""
        if line and self._live is None:
            self._line_break()  # the live area starts on a line of its own
        self._typed = visible(line)
        self._sync()

    # -- the live area: a growing block, then the line being typed ------------------------

    def _open(self, *, thinking: bool) -> None:
        self.close()
        self._line_break()
        self._text, self._thinking, self._block = "", thinking, True
        self._sync()

    def _view(self) -> Any:
        parts: list[Any] = []
        if self._block and self._thinking:
            tail = "\n".join(self._text.splitlines()[-3:])
            parts.append(Text("✻ " + tail, style="dim italic"))
        elif self._block:
            parts.append(
                _Tail(Markdown(self._text, hyperlinks=False), keep=3 if self._typed else 2)
            )
        if self._typed:
            parts.append(Text("› " + self._typed + "▏", style="dim"))
        return Group(*parts)

    def _sync(self) -> None:
        """Start, redraw or stop the live area to match what it should show."""
        if not self.console.is_terminal:
            return
        wanted = self._block or bool(self._typed)
        if wanted and self._live is None:
            # Transient: redrawn in place (a tall block only by its tail), then the block
            # is printed once, whole, when it ends.
            self._live = Live(
                self._view(),
                console=self.console,
                auto_refresh=False,
                transient=True,
                vertical_overflow="crop",
            )
            self._live.start(refresh=True)
        elif wanted and self._live is not None:
            self._live.update(self._view(), refresh=True)
        elif self._live is not None:
            live, self._live = self._live, None
            live.stop()

    def _grow(self, delta: str) -> None:
        self._text += visible(delta)
        now = time.monotonic()
        if self._live is not None and now - self._drawn >= _REFRESH:
            self._live.update(self._view(), refresh=True)
            self._drawn = now

    def close(self, *, keep: bool = True) -> None:
        """End the open text or thinking block (drawn in full), if any."""
        if not self._block:
            return
        if self._live is not None:
            live, self._live = self._live, None
            live.stop()
        if keep and self._text and not self._thinking:
            self.console.print(Markdown(self._text, hyperlinks=False))
        self._text, self._thinking, self._block = "", False, False
        self._sync()  # the line being typed, if any, comes back below

    _thinking = False
    _block = False
    """A text or thinking block is open (growing in the live area)."""
    _typed = ""
    """The line the user is typing during the reply, drawn below the stream."""
    _held = ""
    """Tool output not yet shown: the end of a line, while a typed line is drawn."""

    # -- tools ---------------------------------------------------------------------------

    def _call(self, event: ToolCallEndEvent) -> None:
        call = event.tool_call
        self.close()
        self._line_break()
        line = Text("● ", style="bold cyan")
        line.append(visible(call.name), style="bold")
        line.append(f"({visible(call_summary(call))})")
        self.console.print(line)
        for kind, diff in call_diff(call, self.cwd):
            style = _DIFF_STYLES.get(kind, "dim")
            self.console.print(Text("    " + visible(diff), style=style))

    def _output(self, call_id: str, delta: str) -> None:
        if not delta:
            return
        self._streamed.add(call_id)
        self._held += visible(delta)
        if self._live is not None:  # the typed line is drawn below: whole lines only
            cut = self._held.rfind("\n") + 1
            text, self._held = self._held[:cut], self._held[cut:]
        else:
            text, self._held = self._held, ""
        if text:
            self._print_output(text)

    def _print_output(self, delta: str) -> None:
        text = delta.replace("\n", "\n  │ ")
        if self._at_line_start:
            text = "  │ " + text
        self._at_line_start = delta.endswith("\n")
        if self._at_line_start:
            text = text[: -len("  │ ")]
        self.console.print(Text(text, style="dim"), end="")

    def _result(self, event: ToolResultEndEvent) -> None:
        self._line_break()
        result = event.tool_result
        colour = _RESULT_COLOURS.get(result.state, "red")
        text = visible(result.get_text())
        if result.name == "Read" and result.state is ToolResultState.SUCCESS:
            detail = f"{len(text.splitlines())} lines"
        elif event.block_id in self._streamed:  # the output is on screen already
            lines = text.strip().splitlines()
            detail = lines[-1] if lines else ""
        else:
            detail = " ".join(text.split())
        self._streamed.discard(event.block_id)
        limit = 300 if result.state is not ToolResultState.SUCCESS else 100
        line = Text("  ⎿ ", style="dim")
        line.append(result.state.value, style=colour)
        line.append(" " + (detail if len(detail) <= limit else detail[: limit - 1] + "…"))
        self.console.print(line)

    def _nested(self, event: SubAgentEvent) -> None:
        lines = nested_lines(event)
        if lines:
            self.close()
            self._line_break()
            for line in lines:
                self.console.print(line)

    def _line_break(self) -> None:
        if self._held:  # output held back while a typed line was drawn
            held, self._held = self._held, ""
            self._print_output(held + "\n")
        if not self._at_line_start:
            self.console.print()
            self._at_line_start = True
