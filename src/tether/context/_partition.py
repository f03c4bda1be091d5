"""Choosing what a compression keeps: whole recent messages, the reply in progress, pairs intact.

What is kept must still be a request every provider accepts: it starts with a user turn
(Bedrock's Anthropic, Gemini and many chat templates reject a conversation that opens
with the assistant, and Gemini a tool call that no user turn precedes), no kept result
lacks its call, and no kept call lacks its result.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tether.message import Msg, ToolCallBlock, ToolResultBlock, estimate_msg_tokens

if TYPE_CHECKING:
    from tether.state import AgentState

__all__ = ["Split", "protected_start", "split_context"]

_LEAD_FLOOR = 128  # tokens a cut copy of the user's message may always take


@dataclass(frozen=True, slots=True)
class Split:
    """A context cut in two: the older part to summarise and the recent part kept verbatim."""

    older: list[Msg]
    kept: list[Msg]
    kept_tokens: int
    lead: Msg | None = None
    """The user message the kept part must open with, when none of it is kept whole (an
    input larger than the reserve, or a reply in progress that fills it): it is
    summarised with the older part, and a copy cut to `lead_tokens` goes first."""
    lead_tokens: int = 0


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


def _opens_a_turn(msg: Msg) -> bool:
    """A user message that is not the result half of an older call."""
    return msg.role == "user" and not any(isinstance(b, ToolResultBlock) for b in msg.content)


def _align(context: list[Msg], start: int, protected: int) -> int:
    """Move `start` forward until the kept part opens with a user turn and has no orphans."""
    while start < protected:
        orphan = _orphan_result_index(context, start, protected)
        if orphan is not None:
            start = orphan + 1
            continue
        if _opens_a_turn(context[start]):
            break
        start += 1
    return start


def _walk_back(context: list[Msg], protected: int, budget: int) -> tuple[int, int]:
    """(start, tokens) of the longest run of whole messages before `protected` in budget."""
    used = sum(estimate_msg_tokens(m) for m in context[protected:])
    start = protected
    while start > 0:
        cost = estimate_msg_tokens(context[start - 1])
        if used + cost > budget:
            break
        used += cost
        start -= 1
    return start, used


def split_context(context: list[Msg], protected: int, budget: int) -> Split:
    """Keep the longest run of whole recent messages within `budget` tokens.

    Messages from `protected` on (the reply in progress) are always kept, even past the
    budget. Walking back from there, whole messages are kept while they fit; the first
    one that does not fit ends the kept run, however recent (it is summarised, and
    offloaded in full). A tether reply holds its tool calls and their results in one
    message, so keeping whole messages keeps every pair together; for contexts built
    otherwise, the boundary moves forward past any kept result whose call would be
    summarised. The boundary then moves forward to the first user turn. If that leaves
    no user turn before the reply in progress, the last user message is summarised too
    and a copy of it (cut to the room left, at least a quarter of `budget` or 128 tokens) opens the
    kept part. Costs O(kept), not O(history).
    """
    start, used = _walk_back(context, protected, budget)
    aligned = _align(context, start, protected)
    if aligned != start:
        used -= sum(estimate_msg_tokens(m) for m in context[start:aligned])
        start = aligned
    older, kept = context[:start], context[start:]
    if start < protected or protected == len(context):
        return Split(older=older, kept=kept, kept_tokens=used)
    lead = next((m for m in reversed(older) if _opens_a_turn(m)), None)
    room = max(budget - used, budget // 4, _LEAD_FLOOR)
    return Split(older=older, kept=kept, kept_tokens=used, lead=lead, lead_tokens=room)
