"""Compression and tool-result truncation entry points used by the agent loop."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.context._config import ContextConfig
from tether.context._estimate import estimate_text_tokens
from tether.context._offloader import Offloader
from tether.errors import ContextTooLargeError
from tether.event import ContextCompressedEvent
from tether.message import ToolResultBlock

if TYPE_CHECKING:
    from tether.model import ChatModelBase
    from tether.state import AgentState

__all__ = ["CompressionRequest", "compress_context", "fit_tool_result"]


@dataclass(frozen=True, slots=True)
class CompressionRequest:
    """Everything a compression needs."""

    state: AgentState
    model: ChatModelBase
    config: ContextConfig
    offloader: Offloader | None
    system_prompt: str
    reply_id: str | None
    force: bool = False


def _check_system_prompt(req: CompressionRequest) -> int:
    threshold = int(req.config.trigger_ratio * req.model.context_length)
    prompt_tokens = estimate_text_tokens(req.system_prompt)
    if prompt_tokens > threshold:
        raise ContextTooLargeError(
            f"the system prompt alone is about {prompt_tokens} tokens, over the compression "
            f"threshold of {threshold} (trigger_ratio {req.config.trigger_ratio} x "
            f"context_length {req.model.context_length}); shorten the system prompt or use "
            "a model with a longer context"
        )
    return threshold


async def compress_context(req: CompressionRequest) -> ContextCompressedEvent | None:
    """Compress when over the threshold (or when forced); None when nothing was done."""
    _check_system_prompt(req)
    return None


async def fit_tool_result(
    result: ToolResultBlock, config: ContextConfig, offloader: Offloader | None, state: Any
) -> ToolResultBlock:
    """The copy of `result` the context keeps (cut when over `tool_result_limit`)."""
    return result
