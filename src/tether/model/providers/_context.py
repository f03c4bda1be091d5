"""Context window sizes of known models, matched by the longest name prefix."""

from __future__ import annotations

__all__ = ["context_length_for"]

_DEFAULT = 128_000

_TABLE: dict[str, int] = {
    # OpenAI
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "gpt-5": 400_000,
    "o1-mini": 128_000,
    "o1": 200_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    # Anthropic
    "claude-sonnet-4": 200_000,
    "claude-opus-4": 200_000,
    "claude-haiku-4": 200_000,
    "claude-3": 200_000,
    "claude": 200_000,
    # Gemini
    "gemini-1.5-pro": 2_097_152,
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    "gemini-3": 1_048_576,
    # Qwen (DashScope)
    "qwen-max": 32_768,
    "qwen-plus": 131_072,
    "qwen-turbo": 1_000_000,
    "qwen-long": 10_000_000,
    "qwen3-max": 262_144,
    "qwen3-coder": 262_144,
    "qwen3": 131_072,
    "qwen2.5": 131_072,
    "qwen-vl": 32_768,
    # DeepSeek, Moonshot
    "deepseek": 128_000,
    "kimi-k2": 262_144,
    "moonshot-v1-8k": 8_192,
    "moonshot-v1-32k": 32_768,
    "moonshot-v1-128k": 131_072,
    # Common Ollama tags (the server's num_ctx may be smaller)
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3": 8_192,
    "mistral": 32_768,
    "gemma3": 131_072,
}


def context_length_for(model: str, default: int = _DEFAULT) -> int:
    """The context window of `model` (provider prefixes such as `models/` are ignored)."""
    name = model.lower().rsplit("/", 1)[-1]
    best = ""
    for prefix in _TABLE:
        if name.startswith(prefix) and len(prefix) > len(best):
            best = prefix
    return _TABLE[best] if best else default
