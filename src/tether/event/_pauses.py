"""The pause events of a paused `reply()`, as typed events again."""

from __future__ import annotations

from functools import cache

from pydantic import TypeAdapter

from tether.event._events import RequireExternalExecutionEvent, RequireUserConfirmEvent
from tether.message import Msg

__all__ = ["PauseEvent", "pause_events_of"]

PauseEvent = RequireUserConfirmEvent | RequireExternalExecutionEvent
"""What a paused reply waits for."""


@cache
def _pauses() -> TypeAdapter[list[PauseEvent]]:
    """Built on first use: building it at import costs `import tether` tens of ms."""
    return TypeAdapter(list[PauseEvent])


def pause_events_of(msg: Msg) -> list[PauseEvent]:
    """The events a paused `reply()` ended with (empty if `msg` is not a paused reply).

    `reply()` returns a paused reply's message with the events in
    `metadata["pause_events"]` as JSON (so they survive saving the message); this turns
    them back into `RequireUserConfirmEvent` / `RequireExternalExecutionEvent`.
    """
    return _pauses().validate_python(msg.metadata.get("pause_events", []))
