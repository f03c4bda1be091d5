"""Token estimates without a tokenizer: cheap, and honest about CJK, digits and JSON."""

from __future__ import annotations

from tether.message import (
    ContentBlock,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
)

__all__ = ["estimate_block_tokens", "estimate_msg_tokens", "estimate_text_tokens"]

_IMAGE_TOKENS = 1_000
_MSG_OVERHEAD = 4


def estimate_text_tokens(text: str) -> int:
    """Estimate the tokens of `text`.

    ASCII runs cost about one token per four characters; every non-ASCII character (CJK
    and the like) costs about one token.
    """
    if not text:
        return 0
    ascii_chars = len(text.encode("ascii", "ignore"))
    other = len(text) - ascii_chars
    return (ascii_chars + 3) // 4 + other


def estimate_block_tokens(block: ContentBlock) -> int:
    """Estimate the tokens of one block."""
    if isinstance(block, TextBlock):
        return estimate_text_tokens(block.text)
    if isinstance(block, ThinkingBlock):
        return estimate_text_tokens(block.thinking)
    if isinstance(block, HintBlock):
        return estimate_text_tokens(block.hint)
    if isinstance(block, ToolCallBlock):
        return estimate_text_tokens(block.name) + estimate_text_tokens(block.input) + 4
    if isinstance(block, ToolResultBlock):
        if isinstance(block.output, str):
            return estimate_text_tokens(block.output) + 4
        return sum(estimate_block_tokens(b) for b in block.output) + 4
    if isinstance(block, DataBlock):
        return _IMAGE_TOKENS
    return 0


def estimate_msg_tokens(msg: Msg) -> int:
    """Estimate the tokens of a whole message."""
    return _MSG_OVERHEAD + sum(estimate_block_tokens(b) for b in msg.content)
