"""Messages and the content blocks they are made of."""

from tether._fast import detached
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
from tether.message._msg import AssistantMsg, Msg, Role, SystemMsg, UserMsg
from tether.message._usage import ChatUsage

__all__ = [
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
    "detached",
]
