"""Choosing what a compression keeps: whole recent messages, the reply in progress, pairs intact."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.context._estimate import estimate_msg_tokens
from tether.message import Msg, ToolCallBlock, ToolResultBlock

if TYPE_CHECKING:
    from tether.state import AgentState

__all__ = ["Split", "protected_start", "split_context"]


@dataclass(frozen=True, slots=True)
class Split:
    """A context cut in two: the older part to summarise and the recent part kept verbatim."""

    older: list[Msg]
    kept: list[Msg]
    kept_tokens: int


def protected_start(state: AgentState) -> int:
    """Index of the reply in progress (it and what follows are never compressed).

    `len(context)` when no reply is in progress.
    """
    context = state.context
    if state.reply is None:
        return len(context)
    reply_id = state.reply.reply_id
    for i in range(len(context) - 1, -1, -1):
        if context[i].id == reply_id:
            return i
    return len(context)


def _orphan_result_index(context: list[Msg], start: int, stop: int) -> int | None:
    """The last message in `context[start:stop]` holding a result whose call is older."""
    calls: set[str] = set()
    last = None
    for i in range(start, stop):
        for block in context[i].content:
            if isinstance(block, ToolCallBlock):
                calls.add(block.id)
            elif isinstance(block, ToolResultBlock) and block.id not in calls:
                last = i
    return last


def split_context(context: list[Msg], protected: int, budget: int) -> Split:
    """Keep the longest run of whole recent messages within `budget` tokens.

    Messages from `protected` on (the reply in progress) are always kept, even past the
    budget. Walking back from there, whole messages are kept while they fit; the first
    one that does not fit ends the kept run, however recent (it is summarised, and
    offloaded in full). A tether reply holds its tool calls and their results in one
    message, so keeping whole messages keeps every pair together; for contexts built
    otherwise, the boundary moves forward past any kept result whose call would be
    summarised. Costs O(kept), not O(history).
    """
    used = sum(estimate_msg_tokens(m) for m in context[protected:])
    start = protected
    while start > 0:
        cost = estimate_msg_tokens(context[start - 1])
        if used + cost > budget:
            break
        used += cost
        start -= 1
    orphan = _orphan_result_index(context, start, protected)
    while orphan is not None:
        used -= sum(estimate_msg_tokens(m) for m in context[start : orphan + 1])
        start = orphan + 1
        orphan = _orphan_result_index(context, start, protected)
    return Split(older=context[:start], kept=context[start:], kept_tokens=used)
