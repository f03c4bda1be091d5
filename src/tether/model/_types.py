"""What goes into a model call and what comes out of it."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, Literal

from tether.message import ChatUsage, ContentBlock, Msg

__all__ = [
    "ChatRequest",
    "ChatResponse",
    "ModelDelta",
    "NamedToolChoice",
    "StopDelta",
    "StopReason",
    "TextDelta",
    "ThinkingDelta",
    "ToolCallDelta",
    "ToolChoice",
    "UsageDelta",
]


@dataclass(frozen=True, slots=True)
class NamedToolChoice:
    """Force a call of one named tool."""

    name: str


ToolChoice = Literal["auto", "none", "required"] | NamedToolChoice
"""How the model may use tools: freely, not at all, at least one, or one named tool."""


@dataclass(slots=True)
class ChatRequest:
    """One model call: messages (system prompt first), tool schemas, tool choice."""

    messages: list[Msg]
    """The conversation; the first is the system message."""
    tools: list[dict[str, Any]] = field(default_factory=list)
    """JSON tool schemas, each `{"name", "description", "parameters"}`."""
    tool_choice: ToolChoice = "auto"
    """How the model may use the tools."""
    structured_json_schema: dict[str, Any] | None = None
    """The JSON schema the final answer must follow, if any (the schema of the pydantic
    class given to `Agent.reply(..., structured_schema=...)`)."""
    volatile_prompt: str = ""
    """The part of the system prompt that may change at every step (awake plugins' blocks,
    rounds left, activation hints). A provider that caches prompts sends it after the
    cached prefix, at the end of the request, instead of inside the system prompt."""
    volatile_tail: str | None = None
    """What a caching provider sends last instead of `volatile_prompt`, when the
    conversation already holds the rest of it (an awake plugin's block is in its wake's
    answer: only its status is sent); `None`: `volatile_prompt` itself."""
    stable_tools: list[dict[str, Any]] | None = None
    """The tool list a caching provider sends instead of `tools`: every tool that may become
    callable in this session, in a fixed order and form (a sleeping plugin's tool as a
    stub), so waking a plugin does not change the cached prefix. A call to a tool that is
    not in `tools` is refused by the loop; tools missing here are appended."""

    @property
    def structured_schema(self) -> dict[str, Any] | None:
        """Deprecated alias of `structured_json_schema`, the same dict (read-only).

        `structured_schema` is the pydantic class given to `Agent.reply`; the request
        carries its JSON schema under `structured_json_schema`.
        """
        warnings.warn(
            "`ChatRequest.structured_schema` is deprecated; read `structured_json_schema` "
            "(the same JSON-schema dict)",
            DeprecationWarning,
            stacklevel=2,
        )
        return self.structured_json_schema


@dataclass(frozen=True, slots=True)
class TextDelta:
    """More answer text."""

    text: str


new_text_delta: Callable[[], TextDelta] = partial(object.__new__, TextDelta)
"""A `TextDelta` without its text yet, for `set_delta_text`: providers make one per streamed
chunk, and this pair costs half of `TextDelta(text)` (whose frozen `__init__` sets the field
through `object.__setattr__`). Never hand one out before its text is set."""
set_delta_text: Callable[[TextDelta, str], None] = TextDelta.__dict__["text"].__set__
"""Set the text of a `TextDelta` from `new_text_delta`."""


@dataclass(frozen=True, slots=True)
class ThinkingDelta:
    """More reasoning text, and/or the block's signature.

    `redacted=True` is a whole block whose reasoning the provider withheld: `signature`
    carries it encrypted (Anthropic `redacted_thinking`).
    """

    text: str = ""
    signature: str | None = None
    redacted: bool = False


@dataclass(frozen=True, slots=True)
class ToolCallDelta:
    """A piece of a tool call; pieces with the same `index` belong to one call.

    `id` and `name` usually come with the first piece; empty values never overwrite
    ones already seen (some providers repeat them empty).
    """

    index: int
    id: str | None = None
    name: str | None = None
    arguments: str = ""
    metadata: dict[str, Any] | None = None


@dataclass(frozen=True, slots=True)
class UsageDelta:
    """Token usage; a later one replaces an earlier one of the same call."""

    usage: ChatUsage


StopReason = Literal["stop", "length", "content_filter", "other"]
"""Why the model stopped: it finished (`stop`, also after tool calls), it reached the output
token limit (`length`: the answer is cut short), the provider withheld or cut the answer
(`content_filter`), or another reason the provider gave (`other`)."""


@dataclass(frozen=True, slots=True)
class StopDelta:
    """The answer is complete: why the model stopped, in tether's words and the provider's.

    SDK-backed providers yield it last; their stream raises instead when it ends without
    the provider's end-of-answer marker (the answer was cut short).
    """

    reason: StopReason
    raw: str = ""
    """The provider's own value, e.g. `"max_tokens"` or `"MAX_TOKENS"`."""


ModelDelta = TextDelta | ThinkingDelta | ToolCallDelta | UsageDelta | StopDelta
"""What a provider's stream is made of."""


@dataclass(slots=True)
class ChatResponse:
    """A whole model answer: its blocks in order, and its usage."""

    content: list[ContentBlock]
    usage: ChatUsage | None = None
    model_name: str = ""
    stop_reason: StopReason | None = None
    """Why the model stopped (`length`: the answer was cut short), if the model said."""
