"""Shared helpers for the context tests: a real tokenizer and a summarising script."""

from __future__ import annotations

import base64
import importlib.util
from collections.abc import Callable
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from tether.context import SUMMARY_INSTRUCTIONS
from tether.message import AssistantMsg, ChatUsage, Msg, TextBlock, ToolCallBlock, ToolResultBlock
from tether.model import ChatRequest

# Qwen's pre-tokenizer pattern (the split DashScope's own tokenizer uses).
QWEN_PATTERN = (
    r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}"
    r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
)


@cache
def qwen_encoding() -> Any:
    """The Qwen BPE shipped inside the `dashscope` package, loaded offline with tiktoken."""
    import tiktoken

    spec = importlib.util.find_spec("dashscope")
    assert spec is not None and spec.submodule_search_locations, "dashscope is a dev dependency"
    path = Path(next(iter(spec.submodule_search_locations))) / "resources" / "qwen.tiktoken"
    # One "<base64 token> <rank>" per line. Read here rather than with tiktoken's loader,
    # which before 0.8 opens local files through the optional `blobfile` package.
    pairs = (line.split() for line in path.read_bytes().splitlines() if line)
    ranks = {base64.b64decode(token): int(rank) for token, rank in pairs}
    return tiktoken.Encoding("qwen", pat_str=QWEN_PATTERN, mergeable_ranks=ranks, special_tokens={})


@lru_cache(maxsize=65_536)
def qwen_tokens(text: str) -> int:
    """Exact Qwen token count of `text`."""
    return len(qwen_encoding().encode(text, disallowed_special=()))


def msg_text(msg: Msg) -> str:
    """Everything of a message a provider would send, as text."""
    parts: list[str] = []
    for block in msg.content:
        if isinstance(block, TextBlock):
            parts.append(block.text)
        elif isinstance(block, ToolCallBlock):
            parts.append(f"{block.name} {block.input}")
        elif isinstance(block, ToolResultBlock):
            parts.append(block.get_text())
        else:
            parts.append(getattr(block, "thinking", "") or getattr(block, "hint", ""))
    return "\n".join(parts)


def request_tokens(request: ChatRequest) -> int:
    """Exact Qwen tokens of a whole request (messages plus 4 per message of framing)."""
    return sum(qwen_tokens(msg_text(m)) + 4 for m in request.messages)


def is_summary_request(request: ChatRequest) -> bool:
    """Whether a request is tether's summarising call."""
    first = request.messages[0]
    return first.role == "system" and first.get_text_content() == SUMMARY_INSTRUCTIONS


def transcript_of(request: ChatRequest) -> str:
    """The transcript a summarising call carries."""
    text = request.messages[-1].get_text_content() or ""
    return text.split("<transcript>\n", 1)[1].split("\n</transcript>", 1)[0]


def with_usage(request: ChatRequest, msg: Msg) -> Msg:
    """`msg` with the usage a provider would report (exact Qwen counts)."""
    msg.usage = ChatUsage(
        input_tokens=request_tokens(request), output_tokens=qwen_tokens(msg_text(msg))
    )
    return msg


def summariser(
    agent_step: Callable[[ChatRequest], Msg], *, summary: Callable[[ChatRequest], str] | None = None
) -> Callable[[ChatRequest], Msg]:
    """A script step answering summarising calls with a short summary, others with `agent_step`."""

    def respond(request: ChatRequest) -> Msg:
        if is_summary_request(request):
            text = (
                summary(request) if summary else f"## Goal\nsummary #{len(transcript_of(request))}"
            )
            return with_usage(request, AssistantMsg(name="m", content=text))
        return with_usage(request, agent_step(request))

    return respond
