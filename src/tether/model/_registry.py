"""`from_string("provider:model")`: a chat model from one string, for CLIs and config files."""

from __future__ import annotations

import importlib
from typing import Any, ClassVar

from tether.credential import OpenAICredential
from tether.errors import UnknownProviderError
from tether.model._base import ChatModelBase
from tether.model._scripted import ScriptedChatModel

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
        {"base_url": "https://api.deepseek.com"},
    ),
}


class _DeepSeekCredential(OpenAICredential):
    """The DeepSeek key, from `DEEPSEEK_API_KEY` only: `OPENAI_API_KEY` is not for this host."""

    provider: ClassVar[str] = "DeepSeek"
    api_key_env: ClassVar[tuple[str, ...]] = ("DEEPSEEK_API_KEY",)
    base_url_env: ClassVar[tuple[str, ...]] = ()
    keyless_base_url: ClassVar[bool] = False

    def how_to_set(self) -> str:
        """Where the DeepSeek key goes."""
        return (
            "set the DEEPSEEK_API_KEY environment variable, or pass "
            "`credential=OpenAICredential(api_key=..., base_url='https://api.deepseek.com')`"
        )


_CREDENTIALS: dict[str, type[OpenAICredential]] = {"deepseek": _DeepSeekCredential}


def from_string(spec: str, **kwargs: Any) -> ChatModelBase:
    """Build a model from `"<provider>:<model>"`, e.g. `"dashscope:qwen-max"`.

    Providers: `dashscope`, `openai`, `anthropic`, `ollama`, `gemini`, and `deepseek`
    (the OpenAI-compatible DeepSeek API, key in `DEEPSEEK_API_KEY`), and `scripted:FILE`
    (`ScriptedChatModel.from_file`: a YAML or JSON script, for tests and demos). The credential is
    read from the provider's environment variables; `kwargs` go to the constructor
    (e.g. `credential=`, `stream=False`, `context_length=`).

    Raises:
        UnknownProviderError: the prefix is missing or not a known provider.
    """
    provider, sep, model = spec.partition(":")
    known = ", ".join(sorted([*_PROVIDERS, "scripted"]))
    if provider.strip().lower() == "scripted" and model:
        return ScriptedChatModel.from_file(model, **kwargs)
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
    credential = _CREDENTIALS.get(provider.strip().lower())
    if credential is not None and "credential" not in kwargs:
        kwargs["credential"] = credential(base_url=defaults.get("base_url"))
    return cls(model=model.strip(), **{**defaults, **kwargs})  # type: ignore[no-any-return]  # provider class
