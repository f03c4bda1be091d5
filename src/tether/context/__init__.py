"""Context management: token accounting, compression, truncation and offloading."""

from tether.context._compress import CompressionRequest, compress_context, fit_tool_result
from tether.context._config import ContextConfig
from tether.context._offloader import LocalFileOffloader, Offloader
from tether.context._summarise import SUMMARY_INSTRUCTIONS
from tether.message import (
    count_text_tokens,
    estimate_block_tokens,
    estimate_msg_tokens,
    estimate_text_tokens,
)

__all__ = [
    "SUMMARY_INSTRUCTIONS",
    "CompressionRequest",
    "ContextConfig",
    "LocalFileOffloader",
    "Offloader",
    "compress_context",
    "count_text_tokens",
    "estimate_block_tokens",
    "estimate_msg_tokens",
    "estimate_text_tokens",
    "fit_tool_result",
]
