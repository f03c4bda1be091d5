"""The next action of the loop, as a value: a pure function of the state."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether._loop.current import reply_message
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
_TO_ACT = frozenset({ToolCallState.ALLOWED, ToolCallState.RUNNING})
_WAITING = frozenset({ToolCallState.ASKING, ToolCallState.SUBMITTED})
_UNCHECKED = frozenset({ToolCallState.PENDING})


def next_action(state: AgentState, config: ReActConfig) -> Action:
    """What the loop does next for the reply in progress (`state.reply` must be set).

    Calls found running (their process died) and confirmed calls are handled first; then a pause if any call awaits the user or an external
    result; then unchecked calls; then the model, unless the reply is over.
    """
    cursor = state.reply
    assert cursor is not None, "next_action needs a reply in progress"
    values = cursor.__dict__
    if values["finished"] or values["interrupted"]:
        return _FINISH
    msg = reply_message(state)
    waiting = unchecked = False
    for block in msg.content if msg is not None else ():
        if isinstance(block, ToolCallBlock):
            call_state = block.state
            if call_state in _TO_ACT:  # first, whatever comes after it
                return _ACT
            if call_state in _WAITING:
                waiting = True
            elif call_state in _UNCHECKED:
                unchecked = True
    if waiting:
        calls = msg.tool_calls if msg is not None else []
        return Pause(
            asking=tuple(c for c in calls if c.state is ToolCallState.ASKING),
            submitted=tuple(c for c in calls if c.state is ToolCallState.SUBMITTED),
        )
    if unchecked:
        return _ACT
    iteration = values["iteration"]
    if iteration > config.max_iters:  # the forced final step gave a structured call
        return _FINISH
    return _FORCED_FINAL if iteration >= config.max_iters else _REASON
