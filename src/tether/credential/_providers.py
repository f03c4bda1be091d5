"""One credential class per provider: which environment variables it reads."""

from __future__ import annotations

from typing import ClassVar

from tether.credential._base import CredentialBase

__all__ = [
    "A2ACredential",
    "AnthropicCredential",
    "DashScopeCredential",
    "GeminiCredential",
    "OllamaCredential",
    "OpenAICredential",
]


class A2ACredential(CredentialBase):
    """A remote A2A agent's key, sent as `Authorization: Bearer <key>`: `TETHER_A2A_API_KEY`.

    A `tether serve` API key works as it is.
    """

    provider: ClassVar[str] = "A2A"
    api_key_env: ClassVar[tuple[str, ...]] = ("TETHER_A2A_API_KEY",)


class DashScopeCredential(CredentialBase):
    """Alibaba Cloud DashScope (Qwen): `DASHSCOPE_API_KEY`, `DASHSCOPE_BASE_URL`.

    `base_url` is the native API root, e.g. `https://dashscope.aliyuncs.com/api/v1`
    (`https://dashscope-intl.aliyuncs.com/api/v1` outside mainland China).
    """

    provider: ClassVar[str] = "DashScope"
    api_key_env: ClassVar[tuple[str, ...]] = ("DASHSCOPE_API_KEY",)
    base_url_env: ClassVar[tuple[str, ...]] = ("DASHSCOPE_BASE_URL",)


class OpenAICredential(CredentialBase):
    """OpenAI or any OpenAI-compatible endpoint: `OPENAI_API_KEY`, `OPENAI_BASE_URL`."""

    provider: ClassVar[str] = "OpenAI"
    api_key_env: ClassVar[tuple[str, ...]] = ("OPENAI_API_KEY",)
    base_url_env: ClassVar[tuple[str, ...]] = ("OPENAI_BASE_URL",)
    keyless_base_url: ClassVar[bool] = True
    """Whether an endpoint given by `base_url` may need no key (vLLM, llama.cpp); without
    one, `EMPTY` is sent there."""


class AnthropicCredential(CredentialBase):
    """Anthropic: `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`."""

    provider: ClassVar[str] = "Anthropic"
    api_key_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_API_KEY",)
    base_url_env: ClassVar[tuple[str, ...]] = ("ANTHROPIC_BASE_URL",)


class GeminiCredential(CredentialBase):
    """Google Gemini API: `GEMINI_API_KEY`, else `GOOGLE_API_KEY`."""

    provider: ClassVar[str] = "Gemini"
    api_key_env: ClassVar[tuple[str, ...]] = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
    base_url_env: ClassVar[tuple[str, ...]] = ("GOOGLE_GEMINI_BASE_URL",)


class OllamaCredential(CredentialBase):
    """Ollama: no key for a local server; `OLLAMA_HOST` for the address.

    `api_key` (`OLLAMA_API_KEY`) is sent as a bearer token, for hosted Ollama.
    """

    provider: ClassVar[str] = "Ollama"
    api_key_env: ClassVar[tuple[str, ...]] = ("OLLAMA_API_KEY",)
    base_url_env: ClassVar[tuple[str, ...]] = ("OLLAMA_HOST",)
