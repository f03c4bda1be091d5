"""`OllamaChatModel`: a local (or hosted) Ollama server through the `ollama` SDK."""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any, ClassVar

from tether.credential import OllamaCredential
from tether.errors import MissingProviderError, ModelError, ModelRetryableError
from tether.message import ChatUsage, DataBlock, TextBlock, ThinkingBlock, ToolCallBlock
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
from tether.model.providers._cache import PromptCache
from tether.model.providers._chat_format import (
    append_chat_volatile,
    format_chat_tools,
    split_chat_system,
)
from tether.model.providers._errors import loaded_sdk, parse_retry_after, status_error
from tether.model.providers._names import ANY_NAMES, ToolNames
from tether.model.providers._turns import (
    Turn,
    append_hint,
    forced_tool_reminder,
    is_forced,
    parse_arguments,
    split_turns,
    tool_result_data,
    tool_result_text,
)

__all__ = ["OllamaChatModel", "format_ollama_messages"]

_DEFAULT_HOST = "http://127.0.0.1:11434"

_RETRY_AFTER: ContextVar[float | None] = ContextVar("tether_ollama_retry_after", default=None)
"""The `Retry-After` of the last answer in this task: `ollama.ResponseError` drops headers."""


async def _note_retry_after(response: Any) -> None:
    # An httpx response hook: it runs in the task that made the request, so the value is
    # the one of that task's own call even when calls run concurrently.
    hint = parse_retry_after(dict(response.headers)) if response.status_code >= 400 else None
    _RETRY_AFTER.set(hint)


def _images(blocks: list[Any]) -> tuple[list[str], list[str]]:
    """Inline images (base64) and the URLs Ollama cannot fetch (mentioned as text)."""
    inline, urls = [], []
    for block in blocks:
        if isinstance(block, DataBlock):
            if block.source.type == "base64":
                inline.append(block.source.data)
            else:
                urls.append(f"[image: {block.source.url}]")
    return inline, urls


def _turn_messages(turn: Turn) -> list[dict[str, Any]]:
    if turn.role in ("system", "user"):
        images, urls = _images(turn.blocks)
        message: dict[str, Any] = {
            "role": turn.role,
            "content": "\n".join([turn.text(), *urls]).strip(),
        }
        if images:
            message["images"] = images
        return [message]
    if turn.role == "assistant":
        text = "".join(b.text for b in turn.blocks if isinstance(b, TextBlock))
        message = {"role": "assistant", "content": text}
        thinking = "".join(b.thinking for b in turn.blocks if isinstance(b, ThinkingBlock))
        if thinking:
            message["thinking"] = thinking
        calls = [b for b in turn.blocks if isinstance(b, ToolCallBlock)]
        if calls:
            message["tool_calls"] = [
                {"function": {"name": c.name, "arguments": parse_arguments(c.input)}} for c in calls
            ]
        return [message]
    messages = []
    for result in turn.results:
        images, urls = _images(tool_result_data(result))
        content = "\n".join([tool_result_text(result), *urls])
        message = {"role": "tool", "content": content, "tool_name": result.name}
        if images:
            message["images"] = images
        messages.append(message)
    return messages


def format_ollama_messages(turns: list[Turn]) -> list[dict[str, Any]]:
    """Ollama `/api/chat` messages: arguments as objects, results as `tool` messages."""
    return [m for turn in turns for m in _turn_messages(turn)]


def _usage(response: Any) -> ChatUsage:
    return ChatUsage(
        input_tokens=response.prompt_eval_count or 0, output_tokens=response.eval_count or 0
    )


class _Parser:
    __slots__ = ("calls", "stop")

    def __init__(self) -> None:
        self.calls = 0
        self.stop: str | None = None

    def stopped(self) -> str | None:
        """The `done_reason`, once the `done` line arrived."""
        return self.stop

    def parse(self, response: Any) -> list[ModelDelta]:
        message = response.message
        if message is None or response.done or message.thinking or message.tool_calls:
            return self._parse(response)
        content = message.content  # the common line: a piece of the answer
        if not content:
            return []
        delta = new_text_delta()
        set_delta_text(delta, content)
        return [delta]

    def _parse(self, response: Any) -> list[ModelDelta]:
        deltas: list[ModelDelta] = []
        message = response.message
        if message is not None:
            if message.thinking:
                deltas.append(ThinkingDelta(text=message.thinking))
            if message.content:
                deltas.append(TextDelta(message.content))
            for call in message.tool_calls or ():
                self.calls += 1
                deltas.append(
                    ToolCallDelta(
                        index=self.calls - 1,
                        name=call.function.name,
                        arguments=json.dumps(dict(call.function.arguments or {})),
                    )
                )
        if response.done:
            self.stop = response.done_reason or "stop"
            deltas.append(UsageDelta(_usage(response)))
        return deltas


def _is_refused(error: BaseException) -> bool:
    """Whether the connection could not be made at all (not dropped once made)."""
    httpx = loaded_sdk("httpx")
    return isinstance(error, ConnectionRefusedError) or (
        httpx is not None and isinstance(error, httpx.ConnectError)
    )


class OllamaChatModel(ProviderChatModel[OllamaCredential]):
    """A model served by Ollama (`/api/chat`, NDJSON streaming).

    Ollama cannot force a tool call: `required` or a named tool is asked for in a
    reminder, and `none` sends no tools. Calls come whole, without ids (tether adds them).
    """

    provider: ClassVar[str] = "Ollama"
    credential_type: ClassVar[type[OllamaCredential]] = OllamaCredential
    requires_api_key: ClassVar[bool] = False
    limit_hint: ClassVar[str] = '`generate_kwargs={"options": {"num_predict": ...}}`'

    def __init__(
        self,
        credential: OllamaCredential | None = None,
        model: str = "llama3.1",
        *,
        base_url: str | None = None,
        context_length: int | None = None,
        stream: bool = True,
        thinking: bool | str | None = None,
        keep_alive: float | str | None = None,
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
        self.base_url = base_url or self.credential.base_url or _DEFAULT_HOST
        self.thinking = thinking
        self.keep_alive = keep_alive

    def _make_client(self) -> Any:
        try:
            import ollama
        except ImportError as error:
            raise MissingProviderError("ollama", "ollama", "OllamaChatModel") from error
        key = self.credential.get_api_key()
        headers = {"Authorization": f"Bearer {key}"} if key else None
        hooks = {"response": [_note_retry_after]}
        return ollama.AsyncClient(host=self.base_url, headers=headers, event_hooks=hooks)

    def build_params(self, request: ChatRequest) -> dict[str, Any]:
        """The keyword arguments of `AsyncClient.chat` for `request`."""
        turns = split_turns(request.messages)
        params: dict[str, Any] = {"model": self.model_name, "stream": self.stream_enabled}
        if request.tools and request.tool_choice != "none":
            params["tools"] = format_chat_tools(request, ToolNames(ANY_NAMES))
            if is_forced(request):
                append_hint(turns, forced_tool_reminder(request.tool_choice))
        elif request.structured_json_schema is not None and not request.tools:
            params["format"] = request.structured_json_schema
        messages = format_ollama_messages(turns)
        if self.prompt_cache.enabled:  # Ollama reuses the KV cache of an unchanged prefix
            volatile = split_chat_system(messages, request.volatile_prompt, request.volatile_tail)
            if volatile:
                append_chat_volatile(messages, volatile)
        params["messages"] = messages
        if self.thinking is not None:
            params["think"] = self.thinking
        if self.keep_alive is not None:
            params["keep_alive"] = self.keep_alive
        params.update(self.generate_kwargs)
        return params

    async def _open(self, request: ChatRequest) -> Opened:
        params = self.build_params(request)
        parser = _Parser()
        answer = await self.client.chat(**params)
        chunks = [answer] if not self.stream_enabled else answer
        return Opened(chunks, parser.parse, parser.stopped)

    def _map_error(self, error: BaseException) -> ModelError | None:
        if _is_refused(error):  # no server there: say where we looked and what to do
            return ModelRetryableError(
                f"cannot reach Ollama at {self.base_url} ({type(error).__name__}: {error}); "
                "start it with `ollama serve`, or set OLLAMA_HOST (or `base_url=`) to where "
                "it runs"
            )
        ollama = loaded_sdk("ollama")
        if ollama is None:
            return None
        if isinstance(error, ollama.ResponseError):
            hint = "set `OllamaCredential(api_key=...)` or OLLAMA_API_KEY for a hosted server"
            # An `{"error": ...}` line inside a stream has no status (the SDK says -1): the
            # server failed while generating (runner crashed, out of memory), like a 500.
            status = error.status_code if error.status_code > 0 else 500
            return status_error(
                provider=self.provider,
                status=status,
                message=error.error,
                how_to_fix_auth=hint,
                model=self.model_name,
                retry_after=_RETRY_AFTER.get() if error.status_code > 0 else None,
            )
        return None
