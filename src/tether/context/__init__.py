"""Context management: token accounting, compression, truncation and offloading."""

from tether.context._compress import CompressionRequest, compress_context, fit_tool_result
from tether.context._config import ContextConfig
from tether.context._estimate import (
    estimate_block_tokens,
    estimate_msg_tokens,
    estimate_text_tokens,
)
from tether.context._offloader import Offloader

__all__ = [
    "CompressionRequest",
    "ContextConfig",
    "Offloader",
    "compress_context",
    "estimate_block_tokens",
    "estimate_msg_tokens",
    "estimate_text_tokens",
    "fit_tool_result",
]
