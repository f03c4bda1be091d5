"""`ScriptedChatModel`: a model that plays a script, for testing agents without a network."""

from __future__ import annotations

import inspect
import json
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Any

from tether.errors import ConfigError, ScriptExhaustedError
from tether.message import Msg, TextBlock, ThinkingBlock, ToolCallBlock
from tether.model._base import ChatModelBase
from tether.model._script_file import load_script
from tether.model._types import (
    ChatRequest,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)

__all__ = ["ScriptedChatModel", "ScriptedResponse"]

ScriptedResponse = Msg | BaseException | Sequence[ModelDelta] | Callable[[ChatRequest], Any]
"""A step of the script: an assistant `Msg`, an exception to raise, a list of deltas (a
raw stream), or a callable taking the request and returning one of those (may be async)."""

_PIECE = 16


def _pieces(text: str) -> list[str]:
    return [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]


def msg_to_deltas(msg: Msg) -> list[ModelDelta]:
    """The deltas a provider would stream for `msg` (text and thinking in small pieces)."""
    deltas: list[ModelDelta] = []
    index = 0
    for block in msg.content:
        if isinstance(block, ThinkingBlock):
            deltas.extend(ThinkingDelta(text=p) for p in _pieces(block.thinking))
            if block.signature:
                deltas.append(ThinkingDelta(signature=block.signature))
        elif isinstance(block, TextBlock):
            deltas.extend(TextDelta(text=p) for p in _pieces(block.text))
        elif isinstance(block, ToolCallBlock):
            deltas.append(
                ToolCallDelta(index=index, id=block.id, name=block.name, arguments=block.input)
            )
            index += 1
    if msg.usage is not None:
        deltas.append(UsageDelta(usage=msg.usage))
    return deltas


def _ordinal(n: int) -> str:
    """`1st`, `2nd`, `3rd`, `4th`, ..., `11th`, `12th`, `13th`, `21st`, ..."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


class ScriptedChatModel(ChatModelBase):
    """Answers each call with the next step of a script, recording every request.

    `calls` holds each `ChatRequest` (`.messages`, system prompt first; `.tools`, the JSON
    schemas; `.tool_choice`). Running past the script raises `ScriptExhaustedError`
    naming the call; `assert_complete()` fails if steps were left unused.
    `TimeoutError` and `ConnectionError` steps count as retryable.
    """

    def __init__(
        self,
        responses: Sequence[ScriptedResponse],
        *,
        context_length: int = 128_000,
        name: str = "scripted",
    ) -> None:
        super().__init__(name, context_length=context_length)
        if isinstance(responses, str | Msg):
            raise ConfigError(
                "ScriptedChatModel takes a list of responses, e.g. `[AssistantMsg(...)]`"
            )
        self.responses = list(responses)
        self.calls: list[ChatRequest] = []

    async def _next_step(self, request: ChatRequest) -> Any:
        index = len(self.calls)
        self.calls.append(
            ChatRequest(
                messages=list(request.messages),
                tools=list(request.tools),
                tool_choice=request.tool_choice,
                structured_json_schema=request.structured_json_schema,
                volatile_prompt=request.volatile_prompt,
                volatile_tail=request.volatile_tail,
                stable_tools=request.stable_tools,
            )
        )
        if index >= len(self.responses):
            raise ScriptExhaustedError(
                f"ScriptedChatModel {self.model_name!r} has {len(self.responses)} responses but "
                f"was called a {_ordinal(index + 1)} time (call index {index}); add more responses"
            )
        step = self.responses[index]
        if callable(step) and not isinstance(step, Msg | BaseException):
            step = step(request)
            if inspect.isawaitable(step):
                step = await step
        return step

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """Play the next step of the script."""
        step = await self._next_step(request)
        if isinstance(step, BaseException):
            raise step
        if isinstance(step, Msg):
            deltas = msg_to_deltas(step)
        elif isinstance(step, str):
            deltas = [TextDelta(text=p) for p in _pieces(step)]
        else:
            deltas = list(step)
        for delta in deltas:
            yield delta

    def assert_complete(self) -> None:
        """Fail if some scripted responses were never used."""
        unused = len(self.responses) - len(self.calls)
        if unused > 0:
            raise AssertionError(
                f"ScriptedChatModel {self.model_name!r}: {unused} of {len(self.responses)} "
                f"responses were never used (only {len(self.calls)} calls were made)"
            )

    @classmethod
    def from_file(
        cls, path: str | Path, *, context_length: int = 128_000, name: str | None = None
    ) -> ScriptedChatModel:
        """Play a YAML (or `.json`) script: one list item per model call.

        Each item is a mapping with any of `thinking: str`, `text: str` and `tool_calls:
        [{name, input}]` (call ids are generated), or just `error: "TypeName: message"`,
        raised on that call (a built-in or `tether.errors` type, e.g. `ConnectionError`).

        Raises:
            ScriptFileError: the file is missing, does not parse, or a step is malformed.
        """
        steps = load_script(path)
        return cls(steps, context_length=context_length, name=name or f"scripted:{path}")

    @staticmethod
    def tool_call(
        name: str, arguments: dict[str, Any] | None = None, *, id: str | None = None
    ) -> ToolCallBlock:
        """A tool-call block for a script step: `ToolCallBlock` with JSON arguments."""
        from tether._ids import new_id

        return ToolCallBlock(
            id=id or f"call_{new_id()}", name=name, input=json.dumps(arguments or {})
        )
