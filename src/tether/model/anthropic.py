"""`AnthropicChatModel`: Claude through the Messages API."""

from tether.model.providers._anthropic import AnthropicChatModel

__all__ = ["AnthropicChatModel"]
