"""`from_string("provider:model")`: a chat model from one string, for CLIs and config files."""

from __future__ import annotations

import importlib
from typing import Any

from tether.errors import UnknownProviderError
from tether.model._base import ChatModelBase

__all__ = ["from_string"]

_PROVIDERS: dict[str, tuple[str, str, dict[str, Any]]] = {
    "dashscope": ("tether.model.dashscope", "DashScopeChatModel", {}),
    "openai": ("tether.model.openai", "OpenAIChatModel", {}),
    "anthropic": ("tether.model.anthropic", "AnthropicChatModel", {}),
    "ollama": ("tether.model.ollama", "OllamaChatModel", {}),
    "gemini": ("tether.model.gemini", "GeminiChatModel", {}),
    "deepseek": (
        "tether.model.openai",
        "OpenAIChatModel",
        {"base_url": "https://api.deepseek.com", "api_key_env": "DEEPSEEK_API_KEY"},
    ),
}


def from_string(spec: str, **kwargs: Any) -> ChatModelBase:
    """Build a model from `"<provider>:<model>"`, e.g. `"dashscope:qwen-max"`.

    Providers: `dashscope`, `openai`, `anthropic`, `ollama`, `gemini`, and `deepseek`
    (the OpenAI-compatible DeepSeek API, key in `DEEPSEEK_API_KEY`). The credential is
    read from the provider's environment variables; `kwargs` go to the constructor
    (e.g. `credential=`, `stream=False`, `context_length=`).

    Raises:
        UnknownProviderError: the prefix is missing or not a known provider.
    """
    provider, sep, model = spec.partition(":")
    known = ", ".join(sorted(_PROVIDERS))
    if not sep or not model:
        raise UnknownProviderError(
            f"model spec {spec!r} must look like '<provider>:<model>', e.g. 'dashscope:qwen-max' "
            f"(providers: {known})"
        )
    entry = _PROVIDERS.get(provider.strip().lower())
    if entry is None:
        raise UnknownProviderError(
            f"unknown model provider {provider!r} in {spec!r}; use one of: {known}"
        )
    module, name, defaults = entry
    cls = getattr(importlib.import_module(module), name)
    defaults = dict(defaults)
    env = defaults.pop("api_key_env", None)
    if env is not None and "credential" not in kwargs:
        kwargs["credential"] = _env_credential(env, defaults.get("base_url"))
    return cls(model=model.strip(), **{**defaults, **kwargs})  # type: ignore[no-any-return]  # provider class


def _env_credential(env: str, base_url: str | None) -> Any:
    import os

    from tether.credential import OpenAICredential

    return OpenAICredential(api_key=os.environ.get(env), base_url=base_url)
