"""`reply_message`: the reply's message, found the way the loop finds it many times a step."""

from __future__ import annotations

from tether.message import Msg
from tether.state import AgentState

__all__ = ["reply_message"]


def reply_message(state: AgentState) -> Msg | None:
    """`state.reply_msg()`, checking the last message first: the same message, no search.

    While the loop works on a reply, its message is the last one. `reply_msg` returns the last message with the reply's id, so a last message with that
    id is its answer; any other case is left to it.
    """
    values = state.__dict__
    cursor = values["reply"]
    if cursor is None:
        return None
    context = values["context"]
    if context:
        last: Msg = context[-1]
        if last.id == cursor.reply_id:
            return last
    return state.reply_msg()
