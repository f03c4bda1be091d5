"""Chat models: the base class, the one stream assembler, retries, and the scripted model.

Providers (`DashScopeChatModel`, `OpenAIChatModel`, ...) load their SDK on first use.
"""

from typing import TYPE_CHECKING, Any

from tether.message import ChatUsage
from tether.model._assembler import StreamAssembler
from tether.model._base import ChatModelBase
from tether.model._pricing import (
    DEFAULT_PRICES,
    ModelPrice,
    cost,
    price_for,
    reset_prices,
    set_price,
)
from tether.model._retry import RetryNotice, RetryPolicy, stream_with_retries
from tether.model._scripted import ScriptedChatModel, ScriptedResponse, msg_to_deltas
from tether.model._types import (
    ChatRequest,
    ChatResponse,
    ModelDelta,
    NamedToolChoice,
    StopDelta,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    ToolChoice,
    UsageDelta,
)
from tether.model.providers._cache import PromptCache

if TYPE_CHECKING:  # loaded lazily below; imported here for type checkers and the API docs
    from tether.model._registry import from_string
    from tether.model.anthropic import AnthropicChatModel
    from tether.model.dashscope import DashScopeChatModel
    from tether.model.gemini import GeminiChatModel
    from tether.model.ollama import OllamaChatModel
    from tether.model.openai import OpenAIChatModel

__all__ = [
    "DEFAULT_PRICES",
    "AnthropicChatModel",
    "ChatModelBase",
    "ChatRequest",
    "ChatResponse",
    "ChatUsage",
    "DashScopeChatModel",
    "GeminiChatModel",
    "ModelDelta",
    "ModelPrice",
    "NamedToolChoice",
    "OllamaChatModel",
    "OpenAIChatModel",
    "PromptCache",
    "RetryNotice",
    "RetryPolicy",
    "ScriptedChatModel",
    "ScriptedResponse",
    "StopDelta",
    "StopReason",
    "StreamAssembler",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "UsageDelta",
    "cost",
    "from_string",
    "msg_to_deltas",
    "price_for",
    "reset_prices",
    "set_price",
    "stream_with_retries",
]

_LAZY = {
    "DashScopeChatModel": "tether.model.dashscope",
    "OpenAIChatModel": "tether.model.openai",
    "AnthropicChatModel": "tether.model.anthropic",
    "OllamaChatModel": "tether.model.ollama",
    "GeminiChatModel": "tether.model.gemini",
    "from_string": "tether.model._registry",
}


def __getattr__(name: str) -> Any:
    # Provider modules import their SDK; load them only when asked for.
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'tether.model' has no attribute {name!r}")
    from tether import _lazy

    return _lazy.load(__name__, name, module)
