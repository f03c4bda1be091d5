"""Checking what callers pass in, and what `reply` returns when the reply pauses."""

from __future__ import annotations

from typing import Any

from tether.errors import InvalidInputError
from tether.event import AgentEvent, RequireUserConfirmEvent
from tether.message import Msg, TextBlock, ToolCallBlock, ToolResultBlock
from tether.state import AgentState

__all__ = ["pause_msg", "validate_inputs"]


def validate_inputs(inputs: Any) -> list[Msg]:
    """The input messages as a list, or `InvalidInputError` naming what is wrong."""
    msgs = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
    if not msgs:
        raise InvalidInputError("no messages given; pass a Msg such as `UserMsg(name, content)`")
    for i, msg in enumerate(msgs):
        if not isinstance(msg, Msg):
            raise InvalidInputError(
                f"input {i} is a {type(msg).__name__}, not a Msg or a resume event; wrap text in "
                "`UserMsg(name='user', content=...)`"
            )
        if msg.role == "system":
            raise InvalidInputError(
                f"input {i} is a system message; set the system prompt with "
                "`Agent(system_prompt=...)` or transform it with `on_system_prompt` middleware"
            )
        if any(isinstance(b, ToolCallBlock | ToolResultBlock) for b in msg.content):
            raise InvalidInputError(
                f"input {i} carries tool-call or tool-result blocks; tool results come back "
                "through `ExternalExecutionResultEvent`, not as input messages"
            )
    # Copy at the trust boundary: later changes to the caller's objects can't reach the state.
    return [m.model_copy(update={"content": [b.model_copy() for b in m.content]}) for m in msgs]


def pause_msg(state: AgentState, pauses: list[AgentEvent]) -> Msg:
    """A copy of the paused reply that says what it waits for."""
    reply = state.reply_msg()
    base = reply if reply is not None else Msg(name="agent", role="assistant")
    awaiting = [
        "user_confirmation" if isinstance(e, RequireUserConfirmEvent) else "external_execution"
        for e in pauses
    ]
    calls = [c for e in pauses for c in getattr(e, "tool_calls", [])]
    names = ", ".join(f"{c.name}({c.input})" for c in calls) or "nothing"
    notice = TextBlock(text=f"[paused: waiting for {' and '.join(awaiting) or 'input'} of {names}]")
    return base.model_copy(
        update={
            "content": [*base.content, notice],
            "metadata": {
                **base.metadata,
                "awaiting": awaiting,
                "pause_events": [e.model_dump(mode="json") for e in pauses],
            },
        }
    )
