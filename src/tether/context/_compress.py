"""Compression entry point used by the agent loop (and by `Agent.compress_context`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.context._config import ContextConfig
from tether.context._offloader import Offloader
from tether.context._partition import Split, protected_start, split_context
from tether.context._summarise import (
    Summary,
    chunk_budget,
    cut_to_budget,
    fit_previous,
    summarise,
)
from tether.context._truncate import cut_message, fit_tool_result, take_head
from tether.errors import ContextTooLargeError
from tether.event import ContextCompressedEvent
from tether.message import Msg, count_text_tokens, estimate_msg_tokens, estimate_text_tokens

if TYPE_CHECKING:
    from tether.model import ChatModelBase
    from tether.state import AgentState

__all__ = ["CompressionRequest", "compress_context", "fit_tool_result", "may_need_compressing"]

REFERENCE_PREFIX = "[Full text of the summarised messages: "


@dataclass(frozen=True, slots=True)
class CompressionRequest:
    """Everything a compression needs."""

    state: AgentState
    model: ChatModelBase
    config: ContextConfig
    offloader: Offloader | None
    system_prompt: str
    """The system prompt of the coming step (with the current summary in it)."""
    reply_id: str | None
    force: bool = False
    """Compress even when under the threshold (a manual `compress_context()`)."""
    tools: Sequence[dict[str, Any]] = ()
    """The tool schemas the coming step sends (counted while no usage is anchored)."""


_TOOLS_TOKENS: dict[int, tuple[Sequence[dict[str, Any]], int]] = {}


def _tools_tokens(tools: Sequence[dict[str, Any]]) -> int:
    """Estimated tokens of a tool-schema list, memoised by the list's identity.

    The toolkit hands the same list object to every step while its tools don't change,
    so this is one dictionary lookup per step; the entry keeps the list alive, so its id
    can't be reused by another list.
    """
    hit = _TOOLS_TOKENS.get(id(tools))
    if hit is not None and hit[0] is tools:
        return hit[1]
    tokens = estimate_text_tokens(json.dumps(list(tools)))
    if len(_TOOLS_TOKENS) >= 64:
        _TOOLS_TOKENS.clear()
    _TOOLS_TOKENS[id(tools)] = (tools, tokens)
    return tokens


def _check_fixed_cost(req: CompressionRequest, threshold: int, prompt: int, tools: int) -> None:
    """`ContextTooLargeError` if what no compression can shrink passes the threshold.

    That is the system prompt (without the summary, which a compression replaces) plus
    the tool schemas.
    """
    own = prompt - _wrapped_summary_tokens(req.state.summary)
    if own + tools <= threshold:
        return
    where = (
        f"threshold of {threshold} (trigger_ratio {req.config.trigger_ratio} x "
        f"context_length {req.model.context_length})"
    )
    if own > threshold:
        raise ContextTooLargeError(
            f"the system prompt alone is about {own} tokens, over the compression {where}; "
            "shorten the system prompt or use a model with a longer context"
        )
    raise ContextTooLargeError(
        f"the system prompt (about {own} tokens) and the tool schemas (about {tools} tokens) "
        f"alone pass the compression {where}; shorten the system prompt, offer fewer tools "
        "(e.g. let plugins sleep), or use a model with a longer context"
    )


def _wrapped_summary_tokens(summary: str | None) -> int:
    """Tokens the summary adds to the system prompt (the loop wraps it in a tag)."""
    if not summary:
        return 0
    return estimate_text_tokens(f"\n\n<context_summary>\n{summary}\n</context_summary>")


def _split_references(summary: str | None) -> tuple[str | None, list[str]]:
    """The summary text without its offload reference lines, and those lines."""
    if not summary:
        return summary, []
    lines = summary.splitlines()
    refs = [line for line in lines if line.startswith(REFERENCE_PREFIX)]
    if not refs:
        return summary, []
    text = "\n".join(line for line in lines if not line.startswith(REFERENCE_PREFIX))
    return text.strip() or None, refs


def _reference(path: str) -> str:
    return (
        f"{REFERENCE_PREFIX}{path} (one JSON message per line; read it with the Read "
        "tool when you need exact details).]"
    )


def _drop_notice(count: int, tokens: int, error: Exception, path: str | None) -> str:
    reason = f"{type(error).__name__}: {error}"[:300]
    saved = (
        f" Their full text is in {path}."
        if path is not None
        else " They were not saved anywhere and cannot be recovered."
    )
    return (
        f"[Notice: {count} older messages (about {tokens:,} tokens) were removed from the "
        f"context without a summary, because summarising them failed ({reason}).{saved}]"
    )


def _compose(outcome: Summary, split: Split, path: str | None, budget: int, refs: list[str]) -> str:
    """The new summary: the merged text, a drop notice if needed, the offload references.

    References to earlier offloads are kept (an offloader may write each compression to
    a new place); the one to `path` goes last.
    """
    parts: list[str] = []
    text = outcome.text or ""
    dropped = len(split.older) - outcome.covered
    if outcome.error is not None and dropped:
        older_tokens = sum(estimate_msg_tokens(m) for m in split.older)
        share = older_tokens * dropped // len(split.older)
        notice = _drop_notice(dropped, share, outcome.error, path)
        room = budget - estimate_text_tokens(notice)
        parts += [take_head(text, room) if room > 0 else "", notice]
    else:  # summarised; or, with nothing older, a summary over its budget that failed to shrink
        parts.append(cut_to_budget(text, budget))
    if path is not None:
        new = _reference(path)
        refs = [*(r for r in refs if r != new), new]
    parts += refs
    return "\n\n".join(p for p in parts if p)


def may_need_compressing(
    state: AgentState,
    model: ChatModelBase,
    config: ContextConfig,
    system_prompt: str,
    tools: Sequence[dict[str, Any]],
) -> bool:
    """False when `compress_context` (not forced) would surely do nothing: O(1), no await.

    `compress_context` starts with this check, and the loop's common step makes it before
    building a `CompressionRequest`, so the step builds none. True also when the fixed
    cost alone passes the threshold: then `compress_context` raises
    `ContextTooLargeError` (it always counts more than that).
    """
    threshold = config.threshold(model.context_length)
    prompt_tokens = count_text_tokens(system_prompt, model)
    if state.token_anchor > 0:
        return max(state.estimated_tokens, prompt_tokens) > threshold
    tools_tokens = _tools_tokens(tools) if tools else 0
    return state.estimated_tokens + prompt_tokens + tools_tokens > threshold


async def compress_context(req: CompressionRequest) -> ContextCompressedEvent | None:
    """Compress when over the threshold (or when forced); None when nothing was done.

    Keeps the reply in progress and the most recent whole messages that fit in
    `reserve_ratio` of the window, opening with a user turn; offloads the rest first (if
    an offloader is set), then folds it into the summary with the model, in chunks when
    it is too large for one call. A summary over its budget is shrunk even when no
    message is old enough to go. If summarising fails, the rest is dropped and the
    summary says so. The state changes once, at the end: an error or cancellation before
    that leaves it as it was. Raises `ContextTooLargeError` when the system prompt
    (without the summary) and the tool schemas alone pass the threshold; an offloader's
    own error (e.g. a full disk) propagates, state unchanged.
    """
    state, model, config = req.state, req.model, req.config
    if not req.force and not may_need_compressing(
        state, model, config, req.system_prompt, req.tools
    ):
        return None  # the common path: O(1) beyond counting the (memoised) prompt
    length = model.context_length
    threshold = config.threshold(length)
    prompt_tokens = count_text_tokens(req.system_prompt, model)
    tools_tokens = _tools_tokens(req.tools) if req.tools else 0
    _check_fixed_cost(req, threshold, prompt_tokens, tools_tokens)
    before = state.estimated_tokens + (
        0 if state.token_anchor > 0 else prompt_tokens + tools_tokens
    )
    if not req.force and before <= threshold:
        return None
    split = split_context(state.context, protected_start(state), config.reserve(length))
    budget = config.summary_budget(length)
    previous, refs = _split_references(state.summary)
    oversized = previous is not None and estimate_text_tokens(previous) > budget
    if not split.older and not oversized:
        return None
    path = None
    if req.offloader is not None and split.older:
        path = await req.offloader.offload_messages(state.session_id, split.older)
    previous = fit_previous(previous, length, budget)
    outcome = await summarise(
        model,
        previous,
        split.older,
        budget=budget,
        chunk_tokens=chunk_budget(length, previous, budget),
    )
    summary = _compose(outcome, split, path, budget, refs)
    lead = cut_message(split.lead, split.lead_tokens, path) if split.lead is not None else None
    return _commit(req, split, lead, summary, outcome, before, prompt_tokens + tools_tokens, path)


def _commit(
    req: CompressionRequest,
    split: Split,
    lead: Msg | None,
    summary: str,
    outcome: Summary,
    before: int,
    overhead: int,
    path: str | None,
) -> ContextCompressedEvent:
    state = req.state
    kept, kept_tokens = split.kept, split.kept_tokens
    current = state.context
    if len(current) != len(split.older) + len(kept):  # messages arrived while summarising
        kept = current[len(split.older) :]
        kept_tokens = sum(estimate_msg_tokens(m) for m in kept)
    if lead is not None:
        kept = [lead, *kept]
        kept_tokens += estimate_msg_tokens(lead)
    base = overhead - _wrapped_summary_tokens(state.summary) + _wrapped_summary_tokens(summary)
    for usage in outcome.usage:
        state.record_usage(usage, reanchor=False)
    state.replace_context(list(kept), summary, base_tokens=base, message_tokens=kept_tokens)
    return ContextCompressedEvent(
        reply_id=req.reply_id or "",
        before_tokens=before,
        after_tokens=state.estimated_tokens,
        compressed_messages=len(split.older),
        offload_path=path,
        summarised=outcome.error is None,
    )
