"""Writing one tool result into the reply, and keeping the reply's call ids unique."""

from __future__ import annotations

from dataclasses import replace

from pydantic import BaseModel

from tether._ids import new_id
from tether._loop.assign import put
from tether._loop.batch import call_arguments
from tether._loop.current import reply_message
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState, detached
from tether.model import ToolCallDelta
from tether.state import AgentState

__all__ = ["STRUCTURED_TOOL", "UNKNOWN_OUTCOME", "CallIds", "store_result"]

STRUCTURED_TOOL = "generate_response"
"""The tool the model calls to give a structured final answer."""
UNKNOWN_OUTCOME = (
    "The outcome of this call is unknown: the process running it stopped before it "
    "finished, so it may or may not have taken effect. Check before retrying it."
)
"""The result of a call found running in a loaded state (its process died)."""


def store_result(
    state: AgentState,
    call: ToolCallBlock,
    kept: ToolResultBlock,
    result: ToolResultBlock,
    structured_model: type[BaseModel] | None,
    *,
    shared: bool = True,
) -> None:
    """Put `kept` (the context's copy of `result`) into the reply; the call is finished.

    When the event that carries `result` is `shared` with a caller, the state keeps a
    copy: a caller that changes an event changes nothing stored.
    """
    if kept is result and shared:
        kept = detached(result)
    msg = reply_message(state)
    assert msg is not None and state.reply is not None, "no reply in progress"
    msg.put_tool_result(kept)
    put(call, "state", ToolCallState.FINISHED)
    state.note_blocks([kept])
    if call.name == STRUCTURED_TOOL and result.state is ToolResultState.SUCCESS:
        args = call_arguments(call) or {}
        if structured_model is not None:
            answer = structured_model.model_validate(args)
            msg._structured_output = answer
            msg.metadata["structured_output"] = answer.model_dump(mode="json")
        else:  # resumed in a process that was not given the model class
            msg.metadata["structured_output"] = args
        put(state.reply, "finished", True)


class CallIds:
    """Gives a tool call whose id the reply already used a fresh one, before it is streamed.

    Some servers number calls per response (`call_0` every time); two calls with one id
    would share one result.
    """

    __slots__ = ("_seen", "_state", "_taken")

    def __init__(self, state: AgentState) -> None:
        self._state = state
        self._taken: set[str] | None = None  # read on the first call
        self._seen: set[int] = set()

    def fix(self, item: ToolCallDelta) -> ToolCallDelta:
        """Return `item`, with a fresh id if it opens a call under an id already taken."""
        if item.index in self._seen:
            return item
        self._seen.add(item.index)
        if self._taken is None:
            msg = reply_message(self._state)
            self._taken = {c.id for c in msg.tool_calls} if msg is not None else set()
        call_id = item.id
        if call_id is None:
            return item  # the assembler makes up a fresh one
        if call_id in self._taken:
            call_id = f"call_{new_id()}"
            item = replace(item, id=call_id)
        self._taken.add(call_id)
        return item
