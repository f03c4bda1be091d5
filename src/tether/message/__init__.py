"""Messages, the content blocks they are made of, and their token estimates."""

from tether.message._blocks import (
    Base64Source,
    ContentBlock,
    DataBlock,
    HintBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    URLSource,
)
from tether.message._copy import detached
from tether.message._estimate import (
    BLOCK_OVERHEAD_TOKENS,
    count_text_tokens,
    estimate_block_tokens,
    estimate_msg_tokens,
    estimate_text_tokens,
)
from tether.message._msg import AssistantMsg, Msg, Role, SystemMsg, UserMsg
from tether.message._usage import ChatUsage

__all__ = [
    "BLOCK_OVERHEAD_TOKENS",
    "AssistantMsg",
    "Base64Source",
    "ChatUsage",
    "ContentBlock",
    "DataBlock",
    "HintBlock",
    "Msg",
    "Role",
    "SystemMsg",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolCallState",
    "ToolResultBlock",
    "ToolResultState",
    "URLSource",
    "UserMsg",
    "count_text_tokens",
    "detached",
    "estimate_block_tokens",
    "estimate_msg_tokens",
    "estimate_text_tokens",
]
