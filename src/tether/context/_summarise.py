"""Summarising older messages with the agent's model: chunked, merged, never silent on failure."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tether.context._truncate import take_head, take_tail
from tether.errors import ModelResponseError
from tether.message import (
    ChatUsage,
    DataBlock,
    HintBlock,
    Msg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
    estimate_text_tokens,
)

if TYPE_CHECKING:
    from tether.model import ChatModelBase

__all__ = [
    "SUMMARY_INSTRUCTIONS",
    "Summary",
    "chunk_budget",
    "cut_to_budget",
    "fit_previous",
    "render_message",
    "summarise",
]

SUMMARY_INSTRUCTIONS = """\
You keep the working memory of an AI agent. Older messages are leaving the agent's \
context window; after this, the agent will see only your summary of them plus the most \
recent messages. Write the summary the agent needs to carry on without the removed \
messages.

Merge the previous summary (if any) with the new transcript into one summary, using \
these Markdown sections, each short and concrete:
## Goal
## Progress so far
## Key facts and decisions
## Files, commands and resources
## Open items

Keep exact file paths, identifiers, numbers, commands, error messages and the user's \
stated preferences. Keep any notice that messages were removed without a summary. Drop \
chit-chat and anything superseded. Answer with the summary only."""

_CHUNK_FLOOR = 256  # tokens of transcript per call, whatever the window says
_WINDOW_SHARE = 0.85  # of the window a summarising call may fill
_NOTHING_NEW = "(no new messages: rewrite the previous summary within the budget)"


@dataclass(slots=True)
class Summary:
    """What summarising produced."""

    text: str | None
    """The merged summary (the previous one if nothing new could be summarised)."""
    covered: int
    """How many of the messages (from the oldest) the summary covers."""
    calls: int = 0
    """Model calls made."""
    usage: list[ChatUsage] = field(default_factory=list)
    """The usage each call reported."""
    error: Exception | None = None
    """Why summarising stopped early, if it did."""


def _block_text(block: object) -> str:
    if isinstance(block, TextBlock):
        return block.text
    if isinstance(block, HintBlock):
        return f"(note: {block.hint})"
    if isinstance(block, ToolCallBlock):
        return f"[call {block.name}] {block.input}"
    if isinstance(block, ToolResultBlock):
        state = "" if block.state is ToolResultState.SUCCESS else f" {block.state.value}"
        return f"[result {block.name}{state}] {block.get_text()}"
    if isinstance(block, DataBlock):
        return "[image or file]"
    return ""  # thinking stays out of the transcript (it is offloaded with the message)


def render_message(msg: Msg, cap: int) -> str:
    """One message as transcript text, cut to about `cap` tokens (head and tail kept)."""
    body = "\n".join(t for t in (_block_text(b) for b in msg.content) if t)
    text = f"[{msg.role} {msg.name}]\n{body}\n"
    if estimate_text_tokens(text) <= cap:
        return text
    head = take_head(text, cap * 2 // 3)
    tail = take_tail(text, cap - estimate_text_tokens(head) - 16)
    return f"{head}\n[... message cut for the summary ...]\n{tail}"


def _chunks(messages: list[Msg], budget: int) -> list[tuple[int, str]]:
    """Greedy groups of rendered messages within `budget`: (end index, transcript)."""
    chunks: list[tuple[int, str]] = []
    parts: list[str] = []
    used = 0
    for i, msg in enumerate(messages):
        text = render_message(msg, budget)
        cost = estimate_text_tokens(text)
        if parts and used + cost > budget:
            chunks.append((i, "\n".join(parts)))
            parts, used = [], 0
        parts.append(text)
        used += cost
    if parts:
        chunks.append((len(messages), "\n".join(parts)))
    return chunks


def _prompt(previous: str | None, transcript: str, budget: int) -> str:
    prior = previous if previous else "(none yet)"
    return (
        f"<previous_summary>\n{prior}\n</previous_summary>\n\n"
        f"<transcript>\n{transcript}\n</transcript>\n\n"
        f"Write the updated summary in at most about {budget} tokens."
    )


async def _summarise_chunk(
    model: ChatModelBase, previous: str | None, transcript: str, budget: int
) -> tuple[str, ChatUsage | None]:
    from tether.model import ChatRequest  # model sits beside context; import on use

    request = ChatRequest(
        messages=[
            SystemMsg(name="system", content=SUMMARY_INSTRUCTIONS),
            UserMsg(name="user", content=_prompt(previous, transcript, budget)),
        ]
    )
    response = await model.generate(request)
    text = "\n".join(b.text for b in response.content if isinstance(b, TextBlock)).strip()
    if not text:
        raise ModelResponseError("the summarising call returned no text")
    return cut_to_budget(text, budget), response.usage


def cut_to_budget(text: str, budget: int) -> str:
    """`text`, or its head with a marker if it is longer than `budget` tokens."""
    if estimate_text_tokens(text) <= budget:
        return text
    return take_head(text, budget - 16).rstrip() + "\n[summary cut to its token budget]"


def _overhead(previous: str | None, budget: int) -> int:
    return (
        estimate_text_tokens(SUMMARY_INSTRUCTIONS)
        + 64
        + estimate_text_tokens(previous or "")
        + budget
    )


def fit_previous(previous: str | None, context_length: int, budget: int) -> str | None:
    """The previous summary, cut (head kept) if it leaves a summarising call no room.

    A summary written for a larger window (the model was changed, or `summary_ratio`
    lowered) could otherwise make every summarising call overflow the model.
    """
    if previous is None:
        return None
    room = int(context_length * _WINDOW_SHARE) - _overhead(None, budget) - _CHUNK_FLOOR
    if estimate_text_tokens(previous) <= max(room, budget):
        return previous
    return take_head(previous, max(room, budget) - 16).rstrip() + "\n[earlier summary cut]"


def chunk_budget(context_length: int, previous: str | None, budget: int) -> int:
    """Tokens of transcript one summarising call may carry.

    The call must fit the model's window (with a 15% margin for estimate error), less
    the instructions, the previous summary and room for the new summary. At the trigger
    the older part is about `(trigger_ratio - reserve_ratio)` of the window, which fits
    one call; larger inputs (a long history added with `observe`, or a small window)
    are summarised in several calls.
    """
    return max(int(context_length * _WINDOW_SHARE) - _overhead(previous, budget), _CHUNK_FLOOR)


async def summarise(
    model: ChatModelBase,
    previous: str | None,
    messages: list[Msg],
    *,
    budget: int,
    chunk_tokens: int,
) -> Summary:
    """Fold `messages` into `previous`, one chunk of at most `chunk_tokens` per call.

    Stops at the first failed call (any `Exception`; cancellation propagates) and
    reports how many messages the summary covers, so the caller can drop the rest
    with a notice. With no messages, one call rewrites `previous` within `budget`.
    """
    result = Summary(text=previous, covered=0)
    chunks = _chunks(messages, chunk_tokens) or [(0, _NOTHING_NEW)]
    for end, transcript in chunks:
        result.calls += 1
        try:
            text, usage = await _summarise_chunk(model, result.text, transcript, budget)
        except Exception as exc:  # any failure of the model: fall back to dropping
            result.error = exc
            return result
        result.text, result.covered = text, end
        if usage is not None:
            result.usage.append(usage)
    return result
