"""Compression entry point used by the agent loop (and by `Agent.compress_context`)."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.context._config import ContextConfig
from tether.context._estimate import count_text_tokens, estimate_msg_tokens, estimate_text_tokens
from tether.context._offloader import Offloader
from tether.context._partition import Split, protected_start, split_context
from tether.context._summarise import Summary, chunk_budget, summarise
from tether.context._truncate import fit_tool_result, take_head
from tether.errors import ContextTooLargeError
from tether.event import ContextCompressedEvent

if TYPE_CHECKING:
    from tether.model import ChatModelBase
    from tether.state import AgentState

__all__ = ["CompressionRequest", "compress_context", "fit_tool_result"]

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


def _check_system_prompt(req: CompressionRequest) -> tuple[int, int]:
    """(threshold, prompt tokens); `ContextTooLargeError` if the prompt alone passes it."""
    threshold = req.config.threshold(req.model.context_length)
    prompt_tokens = count_text_tokens(req.system_prompt, req.model)
    if prompt_tokens > threshold:
        raise ContextTooLargeError(
            f"the system prompt alone is about {prompt_tokens} tokens, over the compression "
            f"threshold of {threshold} (trigger_ratio {req.config.trigger_ratio} x "
            f"context_length {req.model.context_length}); shorten the system prompt or use "
            "a model with a longer context"
        )
    return threshold, prompt_tokens


def _wrapped_summary_tokens(summary: str | None) -> int:
    """Tokens the summary adds to the system prompt (the loop wraps it in a tag)."""
    if not summary:
        return 0
    return estimate_text_tokens(f"\n\n<context_summary>\n{summary}\n</context_summary>")


def _strip_reference(summary: str | None) -> str | None:
    if not summary:
        return summary
    lines = [line for line in summary.splitlines() if not line.startswith(REFERENCE_PREFIX)]
    return "\n".join(lines).strip() or None


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


def _compose(
    outcome: Summary, split: Split, path: str | None, budget: int, older_tokens: int
) -> str:
    """The new summary: the merged text, a drop notice if needed, the offload reference."""
    parts: list[str] = []
    if outcome.error is not None:
        dropped = len(split.older) - outcome.covered
        share = older_tokens * dropped // max(len(split.older), 1)
        notice = _drop_notice(dropped, share, outcome.error, path)
        room = budget - estimate_text_tokens(notice)
        if outcome.text:
            parts.append(take_head(outcome.text, room) if room > 0 else "")
        parts.append(notice)
    elif outcome.text:
        parts.append(outcome.text)
    if path is not None:
        parts.append(
            f"{REFERENCE_PREFIX}{path} (one JSON message per line; read it with the Read "
            "tool when you need exact details).]"
        )
    return "\n\n".join(p for p in parts if p)


async def compress_context(req: CompressionRequest) -> ContextCompressedEvent | None:
    """Compress when over the threshold (or when forced); None when nothing was done.

    Keeps the reply in progress and the most recent whole messages that fit in
    `reserve_ratio` of the window; offloads the rest first (if an offloader is set),
    then folds it into the summary with the model, in chunks when it is too large for
    one call. If summarising fails, the rest is dropped and the summary says so. The
    state changes once, at the end: an error or cancellation before that leaves it as
    it was. Raises `ContextTooLargeError` when the system prompt alone passes the
    threshold; an offloader's own error (e.g. a full disk) propagates, state unchanged.
    """
    state, model, config = req.state, req.model, req.config
    threshold, prompt_tokens = _check_system_prompt(req)
    anchored = state.token_anchor > 0
    if anchored and not req.force and state.estimated_tokens <= threshold:
        return None  # the common path: O(1) beyond the prompt check
    tools_tokens = _tools_tokens(req.tools) if req.tools else 0
    before = state.estimated_tokens + (0 if anchored else prompt_tokens + tools_tokens)
    if not req.force and before <= threshold:
        return None
    length = model.context_length
    split = split_context(state.context, protected_start(state), config.reserve(length))
    if not split.older:
        return None
    older_tokens = sum(estimate_msg_tokens(m) for m in split.older)
    path = None
    if req.offloader is not None:
        path = await req.offloader.offload_messages(state.session_id, split.older)
    budget = config.summary_budget(length)
    previous = _strip_reference(state.summary)
    outcome = await summarise(
        model,
        previous,
        split.older,
        budget=budget,
        chunk_tokens=chunk_budget(length, previous, budget),
    )
    summary = _compose(outcome, split, path, budget, older_tokens)
    return _commit(req, split, summary, outcome, before, prompt_tokens + tools_tokens, path)


def _commit(
    req: CompressionRequest,
    split: Split,
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
