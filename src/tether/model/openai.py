"""`OpenAIChatModel`: OpenAI and OpenAI-compatible chat-completions endpoints."""

from tether.model.providers._openai import OpenAIChatModel

__all__ = ["OpenAIChatModel"]
