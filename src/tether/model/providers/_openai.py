"""`OpenAIChatModel`: OpenAI chat completions, and any endpoint that speaks them."""

from __future__ import annotations

from typing import Any, ClassVar

from tether.credential import OpenAICredential
from tether.errors import MissingProviderError, ModelError, ModelRetryableError
from tether.message import ChatUsage
from tether.model._types import ChatRequest
from tether.model.providers._base import Opened, ProviderChatModel
from tether.model.providers._cache import PromptCache, cache_parts, prefix_key
from tether.model.providers._chat_format import (
    ReasoningPolicy,
    append_chat_volatile,
    format_chat_messages,
    format_chat_tools,
    format_tool_choice,
    split_chat_system,
)
from tether.model.providers._chat_stream import extra, open_chat_completion
from tether.model.providers._errors import loaded_sdk, parse_retry_after, status_error
from tether.model.providers._names import CHAT_NAMES, ToolNames
from tether.model.providers._tool_proxy import proxy_plan, sends_proxy
from tether.model.providers._turns import split_turns

__all__ = ["OpenAIChatModel", "openai_usage"]


def _detail(details: Any, name: str) -> int:
    if details is None:
        return 0
    value = details.get(name) if isinstance(details, dict) else getattr(details, name, None)
    return int(value or 0)


def openai_usage(usage: Any) -> ChatUsage:
    """`ChatUsage` from an OpenAI-style usage object (DeepSeek's cache fields included)."""
    cached = _detail(getattr(usage, "prompt_tokens_details", None), "cached_tokens")
    cached = cached or int(extra(usage, "prompt_cache_hit_tokens") or 0)
    return ChatUsage(
        input_tokens=int(usage.prompt_tokens or 0),
        output_tokens=int(usage.completion_tokens or 0),
        cache_read_tokens=cached,
        reasoning_tokens=_detail(
            getattr(usage, "completion_tokens_details", None), "reasoning_tokens"
        ),
    )


class OpenAIChatModel(ProviderChatModel[OpenAICredential]):
    """A model behind the OpenAI chat-completions API (OpenAI, vLLM, DeepSeek, Moonshot, ...).

    Example: `OpenAIChatModel(OpenAICredential(api_key=..., base_url="https://api.deepseek.com"),
    "deepseek-reasoner")`. `reasoning_content` (DeepSeek, Qwen, Kimi) streams as thinking and
    is sent back with tool-call steps (`send_reasoning="auto"`), as those APIs require.
    """

    provider: ClassVar[str] = "OpenAI"
    credential_type: ClassVar[type[OpenAICredential]] = OpenAICredential
    limit_hint: ClassVar[str] = "`max_completion_tokens` (or `max_tokens`) in `generate_kwargs`"

    def __init__(
        self,
        credential: OpenAICredential | None = None,
        model: str = "gpt-4o",
        *,
        base_url: str | None = None,
        context_length: int | None = None,
        stream: bool = True,
        reasoning_effort: str | None = None,
        send_reasoning: ReasoningPolicy = "auto",
        generate_kwargs: dict[str, Any] | None = None,
        prompt_cache: PromptCache | bool = True,
    ) -> None:
        super().__init__(
            credential,
            model,
            context_length=context_length,
            stream=stream,
            generate_kwargs=generate_kwargs,
            prompt_cache=prompt_cache,
        )
        self.base_url = base_url or self.credential.base_url
        self.reasoning_effort = reasoning_effort
        self.send_reasoning: ReasoningPolicy = send_reasoning

    def _make_client(self) -> Any:
        try:
            import openai
        except ImportError as error:
            raise MissingProviderError("openai", "openai", "OpenAIChatModel") from error
        key = self.credential.get_api_key()
        if key is None:
            # A self-hosted endpoint (vLLM, llama.cpp) often needs no key; OpenAI does.
            keyless = self.base_url and self.credential.keyless_base_url
            key = "EMPTY" if keyless else self._api_key()
        return openai.AsyncOpenAI(api_key=key, base_url=self.base_url, max_retries=0)

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` for `request`."""
        return self._params(request, ToolNames(CHAT_NAMES))

    def _params(self, request: ChatRequest, names: ToolNames) -> dict[str, Any]:
        cache = self.prompt_cache
        proxy = proxy_plan(request) if cache.enabled and cache.proxy_tools else None
        messages = format_chat_messages(
            split_turns(request.messages), reasoning=self.send_reasoning, names=names, proxy=proxy
        )
        params: dict[str, Any] = {
            "model": self.model_name,
            "messages": messages,
            "stream": self.stream_enabled,
        }
        if self.stream_enabled:
            params["stream_options"] = {"include_usage": True}
        parts = cache_parts(request, cache)
        if parts.tools:
            tools = parts.tools if proxy is None else proxy.tools
            params["tools"] = format_chat_tools(request, names, tools)
            params["tool_choice"] = format_tool_choice(request.tool_choice, names)
        elif request.structured_json_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "answer", "schema": request.structured_json_schema},
            }
        if self.reasoning_effort is not None:
            params["reasoning_effort"] = self.reasoning_effort
        if self.prompt_cache.enabled:
            volatile = split_chat_system(messages, parts.volatile, parts.tail)
            system = messages[0]["content"] if messages[0]["role"] == "system" else None
            stable = request.tools if request.stable_tools is None else request.stable_tools
            key = self.prompt_cache.key or prefix_key(self.model_name, stable, system)
            if volatile:
                append_chat_volatile(messages, volatile)
            # `extra_body`: the oldest SDKs supported predate the `prompt_cache_key` argument;
            # a user's own `extra_body` keeps its keys
            extra = self.generate_kwargs.get("extra_body") or {}
            params["extra_body"] = {"prompt_cache_key": key, **extra}
        params.update({k: v for k, v in self.generate_kwargs.items() if k != "extra_body"})
        if "extra_body" in self.generate_kwargs and not self.prompt_cache.enabled:
            params["extra_body"] = self.generate_kwargs["extra_body"]
        return params

    async def _open(self, request: ChatRequest) -> Opened:
        names = ToolNames(CHAT_NAMES)
        params = self._params(request, names)
        return await open_chat_completion(
            self.client,
            params,
            openai_usage,
            stream=self.stream_enabled,
            names=names,
            proxy=sends_proxy(params),
        )

    def _map_error(self, error: BaseException) -> ModelError | None:
        return map_openai_error(
            error, self.provider, self.credential.how_to_set(), model=self.model_name
        )


def map_openai_error(
    error: BaseException, provider: str, how_to_fix: str, *, model: str | None = None
) -> ModelError | None:
    """The tether error for an `openai` SDK exception."""
    openai = loaded_sdk("openai")
    if openai is None:
        return None
    if isinstance(error, openai.APIStatusError):
        body = error.body if isinstance(error.body, dict) else {}
        inner = body.get("error", body) if isinstance(body.get("error", body), dict) else body
        message = str(inner.get("message") or error.message)
        return status_error(
            provider=provider,
            status=error.status_code,
            message=message,
            how_to_fix_auth=how_to_fix,
            code=str(inner.get("code") or "") or None,
            retry_after=parse_retry_after(dict(error.response.headers)),
            model=model,
        )
    if isinstance(error, openai.APIConnectionError):  # includes APITimeoutError
        return ModelRetryableError(f"{provider} connection failed: {error}")
    if isinstance(error, openai.APIError):  # an error event inside a 200 stream
        body = error.body if isinstance(error.body, dict) else {}
        code = str(body.get("code") or body.get("type") or error.code or "")
        transient = code in ("server_error", "rate_limit_exceeded", "overloaded", "timeout")
        return status_error(
            provider=provider,
            status=503 if transient else None,
            message=error.message,
            how_to_fix_auth=how_to_fix,
            code=code or None,
        )
    return None
