"""Cutting long text to a token budget, and the context copy of a long tool result."""

from __future__ import annotations

from typing import Any

from tether.context._config import ContextConfig
from tether.context._estimate import _BLOCK_OVERHEAD, estimate_block_tokens, estimate_text_tokens
from tether.context._offloader import Offloader
from tether.message import DataBlock, TextBlock, ToolResultBlock

__all__ = ["fit_tool_result", "take_head", "take_tail"]

_HEAD_SHARE = 0.7  # errors and totals often sit at the end, so the tail gets a share too
_SLACK = 8  # block framing, and pieces that estimate a little more once joined


def _fit_length(text: str, tokens: int, from_end: bool) -> int:
    """How many characters from one end of `text` fit in `tokens` (estimated)."""
    total = estimate_text_tokens(text)
    if total <= tokens:
        return len(text)
    if tokens <= 0:
        return 0
    length = int(len(text) * tokens / total)
    while length > 0:
        piece = text[len(text) - length :] if from_end else text[:length]
        if estimate_text_tokens(piece) <= tokens:
            break
        length = int(length * 0.9)
    return length


def take_head(text: str, tokens: int) -> str:
    """The longest start of `text` within `tokens`, ending at a line break if one is near."""
    length = _fit_length(text, tokens, from_end=False)
    if length >= len(text):
        return text
    head = text[:length]
    cut = head.rfind("\n")
    return head[: cut + 1] if cut >= length * 0.8 else head


def take_tail(text: str, tokens: int) -> str:
    """The longest end of `text` within `tokens`, starting at a line break if one is near."""
    length = _fit_length(text, tokens, from_end=True)
    if length >= len(text):
        return text
    tail = text[len(text) - length :]
    cut = tail.find("\n")
    return tail[cut + 1 :] if 0 <= cut <= length * 0.2 else tail


def _marker(omitted_tokens: int, omitted_chars: int, path: str | None) -> str:
    where = (
        f"The full output is saved at {path}; read it with the Read tool "
        "(use offset/limit to page through it) if you need the omitted part."
        if path is not None
        else "The omitted part was not saved; rerun the tool with narrower output if you need it."
    )
    return (
        f"\n\n[... {omitted_tokens:,} tokens ({omitted_chars:,} characters) of this tool "
        f"result were cut to fit the context. {where} ...]\n\n"
    )


def _data_blocks(result: ToolResultBlock) -> list[DataBlock]:
    if isinstance(result.output, str):
        return []
    return [b for b in result.output if isinstance(b, DataBlock)]


async def fit_tool_result(
    result: ToolResultBlock, config: ContextConfig, offloader: Offloader | None, state: Any
) -> ToolResultBlock:
    """The copy of `result` the context keeps.

    A result within `config.tool_result_limit` tokens is returned as is. A longer one
    keeps its head and tail around a marker that says how much was cut and, when an
    offloader is set, where the full text was written (`metadata["offload_path"]`).
    Images and other data blocks are kept; only the text is cut. `result` itself is
    never changed: the streamed events carry the full output.
    """
    limit = config.tool_result_limit
    output = result.output
    if isinstance(output, str) and len(output) + _BLOCK_OVERHEAD <= limit:
        return result  # the estimate never exceeds the length: no need to count
    if result.metadata.get("truncated") or estimate_block_tokens(result) <= limit:
        return result
    text = result.get_text()
    data = _data_blocks(result)
    total = estimate_text_tokens(text)
    room = limit - _SLACK - sum(estimate_block_tokens(b) for b in data)
    if total <= room:
        return result  # the data blocks, not the text, are what is large
    path = None
    if offloader is not None:
        path = await offloader.offload_text(state.session_id, f"{result.name}-{result.id}", text)
    budget = max(room - estimate_text_tokens(_marker(total, len(text), path)), 0)
    head = take_head(text, int(budget * _HEAD_SHARE))
    tail = take_tail(text[len(head) :], budget - estimate_text_tokens(head))
    omitted = text[len(head) : len(text) - len(tail)]
    cut = head + _marker(estimate_text_tokens(omitted), len(omitted), path) + tail
    kept_output: str | list[TextBlock | DataBlock] = [TextBlock(text=cut), *data] if data else cut
    metadata = {
        **result.metadata,
        "truncated": True,
        "original_tokens": estimate_text_tokens(text),
        "offload_path": path,
    }
    return result.model_copy(update={"output": kept_output, "metadata": metadata})
