"""`DashScopeChatModel`: Qwen and the other DashScope models through the `dashscope` SDK.

The SDK's 2.0 `AsyncClient` speaks DashScope's native protocol
(`/api/v1/services/aigc/text-generation/generation`, SSE with `X-DashScope-SSE: enable`),
takes a `base_url` and `max_retries`, and parses frames into OpenAI-shaped chunks.
"""

from __future__ import annotations

from typing import Any, ClassVar

from tether.credential import DashScopeCredential
from tether.errors import MissingProviderError, ModelError, ModelRetryableError
from tether.message import ChatUsage
from tether.model._types import ChatRequest, NamedToolChoice
from tether.model.providers._base import Opened, ProviderChatModel
from tether.model.providers._cache import PromptCache, cache_parts
from tether.model.providers._chat_format import (
    ReasoningPolicy,
    append_chat_volatile,
    format_chat_messages,
    format_chat_tools,
    format_tool_choice,
    mark_chat_message,
    split_chat_system,
)
from tether.model.providers._chat_stream import open_chat_completion
from tether.model.providers._errors import loaded_sdk, parse_retry_after, status_error
from tether.model.providers._names import CHAT_NAMES, ToolNames
from tether.model.providers._tool_proxy import proxy_plan, sends_proxy
from tether.model.providers._turns import (
    append_hint,
    forced_tool_reminder,
    is_forced,
    sent_choice,
    split_turns,
)

__all__ = ["DashScopeChatModel"]

DEFAULT_BASE_URL = "https://dashscope.aliyuncs.com/api/v1"

_CODE_STATUS = (
    ("Throttling", 429),
    ("InvalidApiKey", 401),
    ("AccessDenied", 403),
    ("InternalError", 500),
    ("ServiceUnavailable", 503),
    ("RequestTimeOut", 504),
)


EXPLICIT_CACHE_MODELS = (
    "qwen3-max",
    "qwen-plus",
    "qwen-flash",
    "qwen3-coder-plus",
    "qwen3-coder-flash",
    "qwen3-vl-plus",
    "qwen3-vl-flash",
)
"""Models (by name prefix) that take explicit `cache_control` markers, per Alibaba Cloud
Model Studio's context-cache page (checked 2026-02). Others cache implicitly: nothing to
send, hits still reported as `cached_tokens`."""

_EPHEMERAL = {"type": "ephemeral"}


def has_explicit_cache(model: str) -> bool:
    """Whether DashScope takes explicit cache markers for `model`."""
    return model.startswith(EXPLICIT_CACHE_MODELS)


def _mark_prefix(messages: list[dict[str, Any]]) -> None:
    """Markers at the end of the system prompt and of the last message (before the tail).

    A marker sits on a content part, so every system, user and tool message's text goes
    as a one-part list: a message sends the same bytes whether it carries the marker
    (the last one) or not (the same message in the next request).
    """
    for message in messages:
        content = message.get("content")
        if message["role"] != "assistant" and isinstance(content, str) and content:
            message["content"] = [{"type": "text", "text": content}]
    if messages and messages[0]["role"] == "system":
        mark_chat_message(messages[0], _EPHEMERAL)
    if len(messages) > 1 and messages[-1]["role"] in ("user", "tool"):
        mark_chat_message(messages[-1], _EPHEMERAL)


def _usage(usage: Any) -> ChatUsage:
    extra = usage.model_extra or {}
    prompt = extra.get("prompt_tokens_details") or {}
    output = extra.get("output_tokens_details") or {}
    return ChatUsage(
        input_tokens=usage.input_tokens or 0,
        output_tokens=usage.output_tokens or 0,
        cache_read_tokens=int(prompt.get("cached_tokens") or 0),
        cache_write_tokens=int(prompt.get("cache_creation_input_tokens") or 0),
        reasoning_tokens=int(output.get("reasoning_tokens") or 0),
    )


class DashScopeChatModel(ProviderChatModel[DashScopeCredential]):
    """A DashScope model (`qwen-max`, `qwen-plus`, `qwen3-*`, ...), the seed's model class.

    `thinking=True` sets `enable_thinking` (an int also sets `thinking_budget`); the
    reasoning streams as thinking blocks. DashScope refuses a forced tool call while
    thinking, and has no `required`: such requests use `auto` plus a reminder.
    """

    provider: ClassVar[str] = "DashScope"
    credential_type: ClassVar[type[DashScopeCredential]] = DashScopeCredential

    def __init__(
        self,
        credential: DashScopeCredential | None = None,
        model: str = "qwen-max",
        *,
        base_url: str | None = None,
        context_length: int | None = None,
        stream: bool = True,
        thinking: bool | int | None = None,
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
        self.base_url = base_url or self.credential.base_url or DEFAULT_BASE_URL
        self.thinking = thinking
        self.send_reasoning: ReasoningPolicy = send_reasoning

    def _make_client(self) -> Any:
        try:
            import dashscope
        except ImportError as error:
            raise MissingProviderError("dashscope", "dashscope", "DashScopeChatModel") from error
        return dashscope.AsyncClient(
            api_key=self._api_key(), base_url=self.base_url, protocol="native", max_retries=0
        )

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `chat.completions.create` for `request`."""
        return self._params(request, ToolNames(CHAT_NAMES))

    def _params(self, request: ChatRequest, names: ToolNames) -> dict[str, Any]:
        turns = split_turns(request.messages)
        params: dict[str, Any] = {"model": self.model_name, "stream": self.stream_enabled}
        cache = self.prompt_cache
        parts = cache_parts(request, cache)
        proxy = proxy_plan(request) if cache.enabled and cache.proxy_tools else None
        if parts.tools:
            tools = parts.tools if proxy is None else proxy.tools
            params["tools"] = format_chat_tools(request, names, tools)
            choice = request.tool_choice
            if is_forced(request) and (self.thinking or not isinstance(choice, NamedToolChoice)):
                append_hint(turns, forced_tool_reminder(sent_choice(choice, names)))
                choice = "auto"
            params["tool_choice"] = format_tool_choice(choice, names)
        messages = format_chat_messages(
            turns,
            reasoning=self.send_reasoning,
            image_style="dashscope",
            tool_name=True,
            names=names,
            proxy=proxy,
        )
        volatile = split_chat_system(messages, parts.volatile, parts.tail)
        if self.prompt_cache.enabled and has_explicit_cache(self.model_name):
            _mark_prefix(messages)
        if volatile:
            append_chat_volatile(messages, volatile)
        params["messages"] = messages
        if self.thinking is not None:
            params["enable_thinking"] = bool(self.thinking)
            if not isinstance(self.thinking, bool):
                params["thinking_budget"] = int(self.thinking)
        params.update(self.generate_kwargs)
        return params

    async def _open(self, request: ChatRequest) -> Opened:
        names = ToolNames(CHAT_NAMES)
        params = self._params(request, names)
        return await open_chat_completion(
            self.client,
            params,
            _usage,
            stream=self.stream_enabled,
            names=names,
            proxy=sends_proxy(params),
        )

    def _map_error(self, error: BaseException) -> ModelError | None:
        errors = loaded_sdk("dashscope.v2.errors")
        if errors is None:
            return None
        if isinstance(error, errors.APIConnectionError):  # includes timeouts
            return ModelRetryableError(f"{self.provider} connection failed: {error.message}")
        if not isinstance(error, errors.DashScopeError):
            return None
        status = error.status_code
        code = error.code or ""
        if status in (None, 200):  # a business error inside a 200 answer or stream
            status = next((s for prefix, s in _CODE_STATUS if code.startswith(prefix)), 400)
        message = f"{error.message} (code {code})" if code else error.message
        return status_error(
            provider=self.provider,
            status=status,
            message=message,
            how_to_fix_auth=self.credential.how_to_set(),
            model=self.model_name,
            code=code or None,
            retry_after=parse_retry_after(dict(error.headers or {})),
        )
