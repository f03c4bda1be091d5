"""`AnthropicChatModel`: Claude through the `anthropic` SDK's Messages API."""

from __future__ import annotations

import json
from functools import partial
from typing import Any, ClassVar

from tether.credential import AnthropicCredential
from tether.errors import MissingProviderError, ModelError, ModelRetryableError
from tether.message import ChatUsage
from tether.model._pricing import cost
from tether.model._types import (
    ChatRequest,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
    new_text_delta,
    set_delta_text,
)
from tether.model.providers._anthropic_format import (
    TOOL_SEARCH_BETA,
    add_cache_breakpoints,
    append_volatile,
    format_anthropic_messages,
    format_anthropic_tool_choice,
    format_anthropic_tools,
)
from tether.model.providers._base import Opened, ProviderChatModel
from tether.model.providers._cache import (
    DEFER_MODELS,
    PromptCache,
    cache_parts,
    deferred_tools,
    split_system,
)
from tether.model.providers._errors import loaded_sdk, parse_retry_after, status_error
from tether.model.providers._names import ANTHROPIC_NAMES, ToolNames
from tether.model.providers._turns import (
    append_hint,
    forced_tool_reminder,
    is_forced,
    sent_choice,
    split_turns,
)

__all__ = ["AnthropicChatModel"]

_RETRYABLE_TYPES = ("overloaded_error", "api_error", "rate_limit_error", "timeout_error")


class _Usage:
    """Token counts and the stop reason of one Anthropic answer.

    Anthropic reports input tokens at the start, output tokens and the stop reason at the end.
    """

    __slots__ = (
        "cache_read",
        "cache_write",
        "input",
        "model",
        "names",
        "output",
        "reported",
        "stop",
        "thinking",
        "ttl",
    )

    def __init__(self, names: ToolNames | None = None, *, model: str = "", ttl: str = "5m") -> None:
        self.model, self.ttl = model, ttl
        self.input = self.output = self.cache_read = self.cache_write = self.thinking = 0
        self.reported = False
        self.stop: str | None = None
        self.names = names or ToolNames(ANTHROPIC_NAMES)

    def stopped(self) -> str | None:
        """The stop reason, once `message_delta` (or `message_stop`) arrived."""
        return self.stop

    def finish(self) -> list[ModelDelta]:
        """The usage, if the stream ended without a `message_delta` carrying it."""
        if self.reported or not (self.input or self.output):
            return []
        return [UsageDelta(self.update(None))]

    def update(self, usage: Any) -> ChatUsage:
        self.input = getattr(usage, "input_tokens", None) or self.input
        self.output = getattr(usage, "output_tokens", None) or self.output
        self.cache_read = getattr(usage, "cache_read_input_tokens", None) or self.cache_read
        self.cache_write = getattr(usage, "cache_creation_input_tokens", None) or self.cache_write
        details = getattr(usage, "output_tokens_details", None)
        if details is None and getattr(usage, "model_extra", None):
            details = usage.model_extra.get("output_tokens_details")
        if isinstance(details, dict):
            self.thinking = int(details.get("thinking_tokens") or self.thinking)
        elif details is not None:
            self.thinking = int(getattr(details, "thinking_tokens", 0) or self.thinking)
        counted = ChatUsage(
            input_tokens=self.input + self.cache_read + self.cache_write,
            output_tokens=self.output,
            cache_read_tokens=self.cache_read,
            cache_write_tokens=self.cache_write,
            reasoning_tokens=self.thinking,
        )
        if self.ttl == "1h" and self.cache_write:  # priced here: the usage has no lifetime
            counted.cost = cost(counted, self.model, cache_ttl="1h")
        return counted


def _event_deltas(usage: _Usage, event: Any) -> list[ModelDelta]:
    kind = event.type
    if kind == "content_block_delta":
        delta = event.delta
        dtype = delta.type
        if dtype == "text_delta":
            text = new_text_delta()
            set_delta_text(text, delta.text)
            return [text]
        if dtype == "input_json_delta":
            return [ToolCallDelta(index=event.index, arguments=delta.partial_json)]
        if dtype == "thinking_delta":
            return [ThinkingDelta(text=delta.thinking)]
        if dtype == "signature_delta":
            return [ThinkingDelta(signature=delta.signature)]
        return []
    if kind == "content_block_start":
        block = event.content_block
        if block.type == "tool_use":
            name = usage.names.original(block.name)
            return [ToolCallDelta(index=event.index, id=block.id, name=name)]
        if block.type == "text" and block.text:
            return [TextDelta(block.text)]
        if block.type == "thinking" and block.thinking:
            return [ThinkingDelta(text=block.thinking)]
        if block.type == "redacted_thinking":
            return [ThinkingDelta(signature=block.data, redacted=True)]
        return []
    if kind == "message_start":
        # Kept, not yielded: a delta before any content would make an error event that
        # follows (e.g. `overloaded_error`) look like a broken stream instead of a retry.
        usage.update(event.message.usage)
        return []
    if kind == "message_delta":
        usage.stop = event.delta.stop_reason or usage.stop or "end_turn"
        if event.usage is not None:
            usage.reported = True
            return [UsageDelta(usage.update(event.usage))]
    elif kind == "message_stop":
        usage.stop = usage.stop or "end_turn"
    return []


def _message_deltas(usage: _Usage, message: Any) -> list[ModelDelta]:
    usage.stop = message.stop_reason or "end_turn"
    deltas: list[ModelDelta] = []
    for index, block in enumerate(message.content):
        if block.type == "text":
            deltas.append(TextDelta(block.text))
        elif block.type == "thinking":
            deltas.append(ThinkingDelta(text=block.thinking, signature=block.signature or None))
        elif block.type == "redacted_thinking":
            deltas.append(ThinkingDelta(signature=block.data, redacted=True))
        elif block.type == "tool_use":
            deltas.append(
                ToolCallDelta(
                    index=index,
                    id=block.id,
                    name=usage.names.original(block.name),
                    arguments=json.dumps(block.input),
                )
            )
    deltas.append(UsageDelta(usage.update(message.usage)))
    return deltas


class AnthropicChatModel(ProviderChatModel[AnthropicCredential]):
    """Claude through the Messages API, streaming by default.

    `thinking=True` (or a token budget) turns on extended thinking; thinking blocks keep
    their signatures and are sent back with the next request, as the API requires. The
    API refuses a forced tool call while thinking: such a request is sent with
    `tool_choice=auto` and a reminder to call the tool.
    """

    provider: ClassVar[str] = "Anthropic"
    credential_type: ClassVar[type[AnthropicCredential]] = AnthropicCredential
    limit_hint: ClassVar[str] = "`AnthropicChatModel(max_tokens=...)`"

    def __init__(
        self,
        credential: AnthropicCredential | None = None,
        model: str = "claude-sonnet-4-6",
        *,
        base_url: str | None = None,
        context_length: int | None = None,
        stream: bool = True,
        thinking: bool | int | dict[str, Any] | None = None,
        max_tokens: int = 8192,
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
        self.max_tokens = max_tokens
        self.thinking: dict[str, Any] | None
        if thinking is None or thinking is False:
            self.thinking = None
        elif isinstance(thinking, dict):
            self.thinking = dict(thinking)
        else:
            budget = 2048 if thinking is True else int(thinking)
            self.thinking = {"type": "enabled", "budget_tokens": budget}

    def _make_client(self) -> Any:
        try:
            import anthropic
        except ImportError as error:
            raise MissingProviderError("anthropic", "anthropic", "AnthropicChatModel") from error
        return anthropic.AsyncAnthropic(
            api_key=self._api_key(), base_url=self.base_url, max_retries=0
        )

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `messages.create` for `request`."""
        return self._params(request, ToolNames(ANTHROPIC_NAMES))

    def _params(self, request: ChatRequest, names: ToolNames) -> dict[str, Any]:
        turns = split_turns(request.messages)
        params: dict[str, Any] = {"model": self.model_name, "max_tokens": self.max_tokens}
        parts = cache_parts(request, self.prompt_cache)
        tools, deferred = parts.tools, set[str]()
        defer = self.prompt_cache.defer_tools
        if defer is None:
            defer = self.model_name.removeprefix("anthropic/").startswith(DEFER_MODELS)
        if self.prompt_cache.enabled and defer:
            tools, deferred = deferred_tools(request)
        if tools:
            params["tools"] = format_anthropic_tools(request, names, tools, deferred)
            if deferred:
                params["extra_headers"] = {"anthropic-beta": TOOL_SEARCH_BETA}
            choice = format_anthropic_tool_choice(request.tool_choice, names)
            if self.thinking is not None and is_forced(request):
                append_hint(turns, forced_tool_reminder(sent_choice(request.tool_choice, names)))
                choice = {"type": "auto"}
            params["tool_choice"] = choice
        system, messages = format_anthropic_messages(turns, names, deferred)
        system, volatile = split_system(system, parts.volatile, parts.tail)
        params["messages"] = messages
        if system:
            params["system"] = system
        if self.prompt_cache.enabled:
            ttl = self.prompt_cache.ttl
            control = {"type": "ephemeral"} if ttl == "5m" else {"type": "ephemeral", "ttl": ttl}
            add_cache_breakpoints(params, control)
        if volatile:
            append_volatile(messages, volatile)
        if self.thinking is not None:
            params["thinking"] = self.thinking
            budget = int(self.thinking.get("budget_tokens", 0))
            if budget >= params["max_tokens"]:
                params["max_tokens"] = budget + 4096
        params.update(self.generate_kwargs)
        return params

    async def _open(self, request: ChatRequest) -> Opened:
        names = ToolNames(ANTHROPIC_NAMES)
        params = self._params(request, names)
        ttl = self.prompt_cache.ttl if self.prompt_cache.enabled else "5m"
        usage = _Usage(names, model=self.model_name, ttl=ttl)
        if not self.stream_enabled:
            message = await self.client.messages.create(**params)
            return Opened([message], partial(_message_deltas, usage), usage.stopped)
        events = await self.client.messages.create(**params, stream=True)
        # A partial, not a lambda: one Python call per event instead of two.
        return Opened(events, partial(_event_deltas, usage), usage.stopped, usage.finish)

    def _map_error(self, error: BaseException) -> ModelError | None:
        anthropic = loaded_sdk("anthropic")
        if anthropic is None:
            return None
        if isinstance(error, anthropic.APIStatusError):
            body = error.body if isinstance(error.body, dict) else {}
            found = body.get("error")
            inner: dict[str, Any] = found if isinstance(found, dict) else {}
            message = str(inner.get("message") or error.message)
            kind = str(inner.get("type") or "")
            status: int | None = error.status_code
            if status == 200 and kind in _RETRYABLE_TYPES:
                status = 529  # an error event inside a stream
            return status_error(
                provider=self.provider,
                status=status,
                message=message,
                how_to_fix_auth=self.credential.how_to_set(),
                model=self.model_name,
                code=kind or None,
                retry_after=parse_retry_after(dict(error.response.headers)),
            )
        if isinstance(error, anthropic.APIConnectionError):
            return ModelRetryableError(f"{self.provider} connection failed: {error}")
        return None
