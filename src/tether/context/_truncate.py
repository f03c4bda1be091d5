"""Cutting long text to a token budget, and the context copy of a long tool result."""

from __future__ import annotations

from typing import Any

from tether._ids import new_id
from tether.context._config import ContextConfig
from tether.context._offloader import Offloader
from tether.message import (
    BLOCK_OVERHEAD_TOKENS,
    DataBlock,
    Msg,
    TextBlock,
    ToolResultBlock,
    estimate_block_tokens,
    estimate_msg_tokens,
    estimate_text_tokens,
)

__all__ = ["cut_message", "fit_tool_result", "take_head", "take_tail"]

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


def _marker(
    omitted_tokens: int, omitted_chars: int, path: str | None, error: str | None, left_out: int
) -> str:
    if path is not None:
        where = (
            f"The full output is saved at {path}; read it with the Read tool "
            "(use offset/limit to page through it) if you need the omitted part."
        )
    elif error is not None:
        where = (
            f"The full output could not be saved ({error}); rerun the tool with narrower "
            "output if you need the omitted part."
        )
    else:
        where = (
            "The omitted part was not saved; rerun the tool with narrower output if you need it."
        )
    return (
        f"\n\n[... {omitted_tokens:,} tokens ({omitted_chars:,} characters) of this tool "
        f"result were cut to fit the context. {where}{_data_note(left_out)} ...]\n\n"
    )


def _data_note(left_out: int) -> str:
    if not left_out:
        return ""
    return f" {left_out} image(s) or file(s) of this result were left out to fit the context."


def _most_tokens(text: str) -> int:
    """A bound on the estimate: one token per ASCII character, three per other one."""
    return len(text) if text.isascii() else 3 * len(text)


def _fit_data(result: ToolResultBlock, room: int) -> tuple[list[DataBlock], int]:
    """The result's data blocks that fit in `room` tokens, in order; and how many do not."""
    if isinstance(result.output, str):
        return [], 0
    data = [b for b in result.output if isinstance(b, DataBlock)]
    kept: list[DataBlock] = []
    for block in data:
        cost = estimate_block_tokens(block)
        if cost <= room:
            kept.append(block)
            room -= cost
    return kept, len(data) - len(kept)


def _cut_text(text: str, room: int, path: str | None, error: str | None, left_out: int) -> str:
    """Head and tail of a tool's text around the marker, within `room` tokens."""
    total = estimate_text_tokens(text)
    budget = max(room - estimate_text_tokens(_marker(total, len(text), path, error, left_out)), 0)
    head = take_head(text, int(budget * _HEAD_SHARE))
    tail = take_tail(text[len(head) :], budget - estimate_text_tokens(head))
    omitted = text[len(head) : len(text) - len(tail)]
    return head + _marker(estimate_text_tokens(omitted), len(omitted), path, error, left_out) + tail


def fits_whole(result: ToolResultBlock, config: ContextConfig) -> bool:
    """Whether `fit_tool_result` surely keeps `result` as it is (a short text): no await."""
    output = result.output
    return (
        type(output) is str
        and _most_tokens(output) + BLOCK_OVERHEAD_TOKENS <= config.tool_result_limit
    )


async def fit_tool_result(
    result: ToolResultBlock, config: ContextConfig, offloader: Offloader | None, state: Any
) -> ToolResultBlock:
    """The copy of `result` the context keeps.

    A result within `config.tool_result_limit` tokens is returned as is. A longer one
    keeps its head and tail around a marker that says how much was cut and, when an
    offloader is set, where the full text was written (`metadata["offload_path"]`), or
    why it could not be (`metadata["offload_error"]`; the reply goes on). Images and
    other data blocks are kept while they fit (the text keeps a quarter of the limit,
    if it needs it); the rest are left out and counted in `metadata["data_left_out"]`.
    `result` itself is never changed: the streamed events carry the full output.
    """
    limit = config.tool_result_limit
    output = result.output
    if isinstance(output, str) and _most_tokens(output) + BLOCK_OVERHEAD_TOKENS <= limit:
        return result  # no need to count
    if result.metadata.get("truncated") or estimate_block_tokens(result) <= limit:
        return result
    text = result.get_text()
    total = estimate_text_tokens(text)
    data, left_out = _fit_data(result, limit - _SLACK - min(total, limit // 4))
    room = limit - _SLACK - sum(estimate_block_tokens(b) for b in data)
    path = error = None
    if total + estimate_text_tokens(_data_note(left_out)) <= room:
        cut = text + _data_note(left_out)  # only data blocks were too many
    else:
        path, error = await _offload(offloader, state, result, text)
        cut = _cut_text(text, room, path, error, left_out)
    kept_output: str | list[TextBlock | DataBlock] = (
        [TextBlock(text=cut), *data] if not isinstance(output, str) else cut
    )
    metadata = {
        **result.metadata,
        "truncated": True,
        "original_tokens": total,
        "offload_path": path,
    }
    if error is not None:
        metadata["offload_error"] = error
    if left_out:
        metadata["data_left_out"] = left_out
    return result.model_copy(update={"output": kept_output, "metadata": metadata})


async def _offload(
    offloader: Offloader | None, state: Any, result: ToolResultBlock, text: str
) -> tuple[str | None, str | None]:
    """(path, None) once saved; (None, why) if saving failed; (None, None) with no offloader.

    A failure must not cost the result: the tool already ran (it may not be safe to run
    again), so the context keeps the cut copy with the reason, and the event the whole.
    """
    if offloader is None:
        return None, None
    try:
        path = await offloader.offload_text(state.session_id, f"{result.name}-{result.id}", text)
    except Exception as exc:  # any offloader's failure (disk, network, a bad name)
        return None, f"{type(exc).__name__}: {exc}"[:300]
    return path, None


def _around(text: str, tokens: int, marker: str) -> str:
    """Head and tail of `text` around `marker`, the whole within about `tokens`."""
    budget = max(tokens - estimate_text_tokens(marker), 0)
    head = take_head(text, int(budget * _HEAD_SHARE))
    tail = take_tail(text[len(head) :], budget - estimate_text_tokens(head))
    return head + marker + tail


def cut_message(msg: Msg, tokens: int, path: str | None) -> Msg:
    """A copy of a user message within about `tokens`: head and tail of its text.

    Returned as is when it fits. The copy gets a new id (the original, with its id, is
    what was summarised and offloaded) and `metadata["cut_from"]`; data blocks are kept
    while they fit in half the room.
    """
    if estimate_msg_tokens(msg) <= tokens:
        return msg
    data: list[DataBlock] = []
    room = tokens // 2
    for block in msg.content:
        if isinstance(block, DataBlock) and estimate_block_tokens(block) <= room:
            data.append(block)
            room -= estimate_block_tokens(block)
    text = msg.get_text_content() or ""
    dropped = sum(isinstance(b, DataBlock) for b in msg.content) - len(data)
    files = f" and {dropped} image(s) or file(s)" if dropped else ""
    where = f" The whole message is saved in {path} (one JSON message per line)." if path else ""
    marker = (
        f"\n\n[... part of this message{files} was cut to fit the context; it is "
        f"summarised in <context_summary> in the system prompt.{where} ...]\n\n"
    )
    room = tokens - sum(estimate_block_tokens(b) for b in data) - _SLACK
    cut = _around(text, room, marker)
    return msg.model_copy(
        update={
            "id": new_id(),
            "content": [TextBlock(text=cut), *data],
            "metadata": {**msg.metadata, "cut_from": msg.id},
        }
    )
