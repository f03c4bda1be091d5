"""`GeminiChatModel`: Google Gemini through the `google-genai` SDK."""

from __future__ import annotations

import json
from typing import Any, ClassVar

from tether.credential import GeminiCredential
from tether.errors import MissingProviderError, ModelError
from tether.message import ChatUsage
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
from tether.model.providers._base import Opened, ProviderChatModel
from tether.model.providers._cache import PromptCache, cache_parts, split_system
from tether.model.providers._errors import loaded_sdk, parse_retry_after, status_error
from tether.model.providers._gemini_format import (
    SIGNATURE_KEY,
    encode_signature,
    format_gemini,
    format_gemini_tools,
)
from tether.model.providers._names import GEMINI_NAMES, ToolNames
from tether.model.providers._turns import split_turns

__all__ = ["GeminiChatModel"]


def _genai_types() -> Any:
    """`google.genai.types`, or `MissingProviderError` naming the extra."""
    try:
        from google.genai import types
    except ImportError as error:
        raise MissingProviderError("google-genai", "gemini", "GeminiChatModel") from error
    return types


def _usage(meta: Any) -> ChatUsage:
    thoughts = meta.thoughts_token_count or 0
    return ChatUsage(
        input_tokens=meta.prompt_token_count or 0,
        output_tokens=(meta.candidates_token_count or 0) + thoughts,
        cache_read_tokens=meta.cached_content_token_count or 0,
        reasoning_tokens=thoughts,
    )


def _name(value: Any) -> str:
    """An SDK enum member's wire name (`"MAX_TOKENS"`)."""
    return str(getattr(value, "value", value))


class _Parser:
    """Deltas of Gemini responses; each `functionCall` part is one whole call."""

    __slots__ = ("calls", "names", "stop", "usage")

    def __init__(self, names: ToolNames) -> None:
        self.names = names
        self.calls = 0
        self.usage: Any = None
        self.stop: str | None = None

    def stopped(self) -> str | None:
        """The finish reason (or the prompt's block reason), once it arrived."""
        return self.stop

    def parse(self, response: Any) -> list[ModelDelta]:
        deltas: list[ModelDelta] = []
        candidates = response.candidates
        if candidates:
            candidate = candidates[0]
            if candidate.content is not None:
                for part in candidate.content.parts or ():
                    deltas.extend(self._part(part))
            if candidate.finish_reason is not None:
                self.stop = _name(candidate.finish_reason)
        else:
            feedback = response.prompt_feedback
            if feedback is not None and feedback.block_reason is not None:
                self.stop = _name(feedback.block_reason)  # the prompt itself was refused
        if response.usage_metadata is not None:
            self.usage = response.usage_metadata  # sent with every event; the last one counts
        return deltas

    def finish(self) -> list[ModelDelta]:
        return [] if self.usage is None else [UsageDelta(_usage(self.usage))]

    def parse_whole(self, response: Any) -> list[ModelDelta]:
        return [*self.parse(response), *self.finish()]

    def _part(self, part: Any) -> list[ModelDelta]:
        raw = part.thought_signature
        signature = encode_signature(raw) if raw else None
        if part.function_call is not None:
            call = part.function_call
            self.calls += 1
            return [
                ToolCallDelta(
                    index=self.calls - 1,
                    id=call.id or None,
                    name=self.names.original(call.name or ""),
                    arguments=json.dumps(call.args or {}),
                    metadata={SIGNATURE_KEY: signature} if signature else None,
                )
            ]
        if part.thought:
            return [ThinkingDelta(text=part.text or "", signature=signature)]
        text = part.text
        if signature is None and text:  # the common part: a piece of the answer
            delta = new_text_delta()
            set_delta_text(delta, text)
            return [delta]
        deltas: list[ModelDelta] = []
        if signature is not None:
            deltas.append(ThinkingDelta(signature=signature))
        if text:
            deltas.append(TextDelta(text))
        return deltas


class GeminiChatModel(ProviderChatModel[GeminiCredential]):
    """Gemini through the Gemini Developer API (`generateContent` / `streamGenerateContent`).

    Thought signatures are kept (on tool calls' `metadata` and on thinking blocks) and
    sent back, which Gemini requires for function calling with thinking models.
    """

    provider: ClassVar[str] = "Gemini"
    credential_type: ClassVar[type[GeminiCredential]] = GeminiCredential
    limit_hint: ClassVar[str] = "`max_output_tokens` in `generate_kwargs`"

    def __init__(
        self,
        credential: GeminiCredential | None = None,
        model: str = "gemini-2.5-flash",
        *,
        base_url: str | None = None,
        context_length: int | None = None,
        stream: bool = True,
        thinking: bool | int | None = None,
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
        self.thinking = thinking

    def _make_client(self) -> Any:
        try:
            from google import genai
            from google.genai import types
        except ImportError as error:
            raise MissingProviderError("google-genai", "gemini", "GeminiChatModel") from error
        import httpx

        # httpx rather than the SDK's default aiohttp: one transport for every provider,
        # and no implicit reconnect loop (tether's retry policy is the only one).
        options = types.HttpOptions(
            base_url=self.base_url,
            api_version="v1beta",
            retry_options=types.HttpRetryOptions(attempts=1),
            httpx_async_client=httpx.AsyncClient(timeout=httpx.Timeout(600.0, connect=10.0)),
        )
        # `vertexai=False`: the SDK would switch to Vertex AI (other URLs, other auth) when
        # GOOGLE_GENAI_USE_VERTEXAI is set; this model is the Gemini Developer API.
        return genai.Client(vertexai=False, api_key=self._api_key(), http_options=options)

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `models.generate_content[_stream]` for `request`."""
        return self._params(request, ToolNames(GEMINI_NAMES))

    def _params(self, request: ChatRequest, names: ToolNames) -> dict[str, Any]:
        types = _genai_types()
        system, contents = format_gemini(split_turns(request.messages), names)
        parts = cache_parts(request, self.prompt_cache)
        system, volatile = split_system(system, parts.volatile, parts.tail)
        if volatile:  # implicit caching: the stable prefix first, what changes last
            if contents and contents[-1].role == "user":
                contents[-1].parts.append(types.Part(text=volatile))
            else:
                contents.append(types.Content(role="user", parts=[types.Part(text=volatile)]))
        config: dict[str, Any] = {}
        if system:
            config["system_instruction"] = system
        if parts.tools:
            config["tools"], config["tool_config"] = format_gemini_tools(
                request, names, parts.tools
            )
        elif request.structured_json_schema is not None:
            config["response_mime_type"] = "application/json"
            config["response_json_schema"] = request.structured_json_schema
        if self.thinking is not None and self.thinking is not False:
            budget = None if self.thinking is True else int(self.thinking)
            config["thinking_config"] = types.ThinkingConfig(
                include_thoughts=True, thinking_budget=budget
            )
        config.update(self.generate_kwargs)
        return {
            "model": self.model_name,
            "contents": contents,
            "config": types.GenerateContentConfig(**config),
        }

    async def _open(self, request: ChatRequest) -> Opened:
        names = ToolNames(GEMINI_NAMES)
        params = self._params(request, names)
        models = self.client.aio.models
        parser = _Parser(names)
        if not self.stream_enabled:
            answer = await models.generate_content(**params)
            return Opened([answer], parser.parse_whole, parser.stopped)
        stream = await models.generate_content_stream(**params)
        return Opened(stream, parser.parse, parser.stopped, parser.finish)

    def _map_error(self, error: BaseException) -> ModelError | None:
        errors = loaded_sdk("google.genai.errors")
        if errors is None:
            return None
        if not isinstance(error, errors.APIError):
            return None
        message = str(error.message or error)
        status: int | None = error.code
        if status == 400 and "api key" in message.lower():
            status = 401  # Gemini reports a bad key as INVALID_ARGUMENT
        return status_error(
            provider=self.provider,
            status=status,
            message=f"{message} ({error.status})" if error.status else message,
            how_to_fix_auth=self.credential.how_to_set(),
            model=self.model_name,
            retry_after=_retry_after(error),
        )


def _retry_after(error: Any) -> float | None:
    """The `RetryInfo.retryDelay` of a Google error body, else the `Retry-After` header."""
    details = error.details if isinstance(error.details, dict) else {}
    inner = details.get("error", details)
    for item in (inner.get("details") or []) if isinstance(inner, dict) else []:
        delay = item.get("retryDelay") if isinstance(item, dict) else None
        if isinstance(delay, str) and delay.endswith("s"):
            try:
                return float(delay[:-1])
            except ValueError:
                pass
    headers = getattr(getattr(error, "response", None), "headers", None)
    return parse_retry_after(dict(headers)) if headers else None
