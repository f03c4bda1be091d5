"""Checking the messages a caller passes to `reply`/`observe`, and copying them in."""

from __future__ import annotations

from typing import Any

from tether._fast import detached
from tether.errors import InvalidInputError
from tether.message._blocks import ToolCallBlock, ToolResultBlock
from tether.message._msg import Msg

__all__ = ["validate_inputs"]

_TOOL_BLOCKS = (ToolCallBlock, ToolResultBlock)
# The resume events (`tether.event` sits above this package, so they go by name).
_RESUME_EVENTS = frozenset(
    {"UserConfirmResultEvent", "ExternalExecutionResultEvent", "UserInterruptEvent"}
)


def validate_inputs(inputs: Any) -> list[Msg]:
    """The input messages as a list, or `InvalidInputError` naming what is wrong."""
    msgs = list(inputs) if isinstance(inputs, list | tuple) else [inputs]
    if not msgs:
        raise InvalidInputError("no messages given; pass a Msg such as `UserMsg(name, content)`")
    for i, msg in enumerate(msgs):
        if type(msg).__name__ in _RESUME_EVENTS:
            raise InvalidInputError(
                f"input {i} is a {type(msg).__name__}; pass it to `reply`/`reply_stream` "
                "alone, not in a list and not to `observe`"
            )
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
        for block in msg.content:
            if isinstance(block, _TOOL_BLOCKS):
                raise InvalidInputError(
                    f"input {i} carries tool-call or tool-result blocks; tool results come "
                    "back through `ExternalExecutionResultEvent`, not as input messages"
                )
    # Copy at the trust boundary: later changes to the caller's objects can't reach the state.
    return [detached(m) for m in msgs]
