"""The next action of the loop, as a value: a pure function of the state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.message import ToolCallBlock, ToolCallState
from tether.state import AgentState

if TYPE_CHECKING:
    from tether.agent import ReActConfig

__all__ = ["Act", "Action", "Finish", "Pause", "Reason", "next_action"]


@dataclass(frozen=True, slots=True)
class Reason:
    """Call the model; `forced_final` when the iteration limit is reached."""

    forced_final: bool = False


@dataclass(frozen=True, slots=True)
class Act:
    """Check and run the next batch of tool calls."""


@dataclass(frozen=True, slots=True)
class Pause:
    """Wait for outside input: confirmations and/or external results."""

    asking: tuple[ToolCallBlock, ...]
    submitted: tuple[ToolCallBlock, ...]


@dataclass(frozen=True, slots=True)
class Finish:
    """The reply is complete."""


Action = Reason | Act | Pause | Finish
_ACT, _FINISH = Act(), Finish()
_REASON, _FORCED_FINAL = Reason(), Reason(forced_final=True)
_RUN, _RUNNING = ToolCallState.ALLOWED, ToolCallState.RUNNING
_ASKING, _SUBMITTED = ToolCallState.ASKING, ToolCallState.SUBMITTED


def next_action(state: AgentState, config: ReActConfig) -> Action:
    """What the loop does next for the reply in progress (`state.reply` must be set).

    Calls found running (their process died) and confirmed calls are handled first; then a pause if any call awaits the user or an external
    result; then unchecked calls; then the model, unless the reply is over.
    """
    cursor = state.reply
    assert cursor is not None, "next_action needs a reply in progress"
    if cursor.finished or cursor.interrupted:
        return _FINISH
    msg = state.reply_msg()
    content = msg.content if msg is not None else ()
    states = {b.state for b in content if isinstance(b, ToolCallBlock)}
    if _RUN in states or _RUNNING in states:
        return _ACT
    if _ASKING in states or _SUBMITTED in states:
        calls = msg.tool_calls if msg is not None else []
        return Pause(
            asking=tuple(c for c in calls if c.state is ToolCallState.ASKING),
            submitted=tuple(c for c in calls if c.state is ToolCallState.SUBMITTED),
        )
    if ToolCallState.PENDING in states:
        return _ACT
    if cursor.iteration > config.max_iters:  # the forced final step gave a structured call
        return _FINISH
    return _FORCED_FINAL if cursor.iteration >= config.max_iters else _REASON
