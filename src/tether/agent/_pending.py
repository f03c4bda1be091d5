"""`pending_calls`: what a paused reply waits for, sub-agents' calls included."""

from __future__ import annotations

from tether._loop.nested import expand
from tether._loop.pause import waiting_calls
from tether.message import ToolCallBlock, ToolCallState
from tether.state import AgentState

__all__ = ["pending_calls"]


def pending_calls(state: AgentState) -> tuple[list[ToolCallBlock], list[ToolCallBlock]]:
    """The calls the reply in progress waits for: (awaiting confirmation, awaiting results).

    A call waiting on its sub-agent is replaced by the sub-agent's waiting calls, their ids
    qualified by the call path (`parent_call/child_call`) as in the pause events; answer
    them with those ids. The calls are the state's own for the reply's own calls (do not
    change them) and copies for a sub-agent's.
    """
    asking = list(waiting_calls(state, ToolCallState.ASKING).values())
    submitted = list(waiting_calls(state, ToolCallState.SUBMITTED).values())
    if not submitted:
        return asking, submitted
    return expand(state, asking, submitted)
