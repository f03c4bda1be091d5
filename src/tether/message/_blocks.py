"""Content blocks: what a message is made of."""

import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether._fast import AS_STR
from tether._ids import new_id, now_iso
from tether._rule import PermissionRule

__all__ = [
    "Base64Source",
    "ContentBlock",
    "DataBlock",
    "HintBlock",
    "TextBlock",
    "ThinkingBlock",
    "ToolCallBlock",
    "ToolCallState",
    "ToolResultBlock",
    "ToolResultState",
    "URLSource",
]

_CONFIG = ConfigDict(defer_build=True, extra="forbid")


def fresh_id(_data: dict[str, Any]) -> str:
    """A new id, as a default factory.

    It takes the validated data (and ignores it) so that pydantic's `exclude_defaults`
    does not call it to compare: an id made up now never equals the stored one.
    """
    return new_id()


def tag(value: str) -> Any:
    """The default factory of a discriminator `type` field, always `value`.

    A factory that takes the validated data is never compared by `exclude_defaults`, so a
    compact dump (`exclude_defaults=True`) keeps the `type` that the unions need to load.
    """

    def factory(_data: dict[str, Any]) -> str:
        return value

    return factory


def fresh_time(_data: dict[str, Any]) -> str:
    """The current UTC time, as a default factory (taking the data for the reason above).

    ISO 8601 with milliseconds and `Z` (`2026-12-02T05:00:42.349Z`, what JavaScript's
    `Date.toISOString()` writes): a message's order is its place in the context, so the
    time is for people, and this form is 8 bytes shorter than microseconds and `+00:00`.
    """
    return now_iso()[:23] + "Z"


class ToolCallState(StrEnum):
    """Where a tool call is in its life."""

    PENDING = "pending"
    """Proposed by the model; not yet checked."""
    ASKING = "asking"
    """Waiting for the user's confirmation."""
    ALLOWED = "allowed"
    """Allowed (by the engine or the user); not yet started."""
    SUBMITTED = "submitted"
    """Handed to an external executor; waiting for its result."""
    FINISHED = "finished"
    """Has its result."""
    RUNNING = "running"
    """Its tool was started and has not finished; found in a loaded state, its process
    died while it ran (the outcome is unknown)."""


class ToolResultState(StrEnum):
    """How a tool call ended."""

    SUCCESS = "success"
    ERROR = "error"
    INTERRUPTED = "interrupted"
    DENIED = "denied"
    RUNNING = "running"


class TextBlock(BaseModel):
    """Plain text."""

    model_config = _CONFIG
    type: Literal["text"] = Field(default_factory=tag("text"))
    text: str
    """The text."""
    id: str = Field(default_factory=fresh_id)
    """Block id; streamed deltas carry it."""


class ThinkingBlock(BaseModel):
    """The model's reasoning, with the provider's signature when it gives one."""

    model_config = _CONFIG
    type: Literal["thinking"] = Field(default_factory=tag("thinking"))
    thinking: str
    """The reasoning text."""
    signature: str | None = None
    """Provider signature that must be sent back unchanged (Anthropic, Gemini)."""
    id: str = Field(default_factory=fresh_id)
    """Block id; streamed deltas carry it."""
    redacted: bool = False
    """The provider withheld the reasoning (Anthropic `redacted_thinking`): `thinking` is
    empty and `signature` holds the encrypted reasoning to send back unchanged."""


class Base64Source(BaseModel):
    """Inline data, base64-encoded."""

    model_config = _CONFIG
    type: Literal["base64"] = Field(default_factory=tag("base64"))
    media_type: str
    """MIME type, e.g. `image/png`."""
    data: str
    """The base64 payload."""


class URLSource(BaseModel):
    """Data behind a URL."""

    model_config = _CONFIG
    type: Literal["url"] = Field(default_factory=tag("url"))
    url: str
    """Where the data lives."""
    media_type: str | None = None
    """MIME type, if known."""


class DataBlock(BaseModel):
    """Binary content such as an image, inline or by URL."""

    model_config = _CONFIG
    type: Literal["data"] = Field(default_factory=tag("data"))
    source: Annotated[Base64Source | URLSource, Field(discriminator="type")]
    """Where the bytes are."""
    id: str = Field(default_factory=fresh_id)
    """Block id."""


class HintBlock(BaseModel):
    """Guidance written by tether for the model (e.g. the max-iterations notice)."""

    model_config = _CONFIG
    type: Literal["hint"] = Field(default_factory=tag("hint"))
    hint: str
    """The text the model reads."""
    id: str = Field(default_factory=fresh_id)
    """Block id."""


class ToolCallBlock(BaseModel):
    """A tool call proposed by the model."""

    model_config = _CONFIG
    type: Literal["tool_call"] = Field(default_factory=tag("tool_call"))
    id: str
    """Call id, unique within the reply; the result carries the same id."""
    name: str
    """The tool's name."""
    input: str = "{}"
    """The arguments, JSON-encoded (a dict given here is encoded)."""
    state: Annotated[ToolCallState, AS_STR] = ToolCallState.PENDING
    """Where the call is in its life."""
    suggested_rules: list[PermissionRule] = Field(default_factory=list)
    """Rules the user may accept so that similar calls run without asking."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Provider data to send back with the call (e.g. a Gemini thought signature)."""

    @field_validator("input", mode="before")
    @classmethod
    def _encode_dict(cls, value: Any) -> Any:
        # An edited confirmation is naturally written as a dict: accept it as such.
        return json.dumps(value, ensure_ascii=False) if isinstance(value, dict) else value


class ToolResultBlock(BaseModel):
    """The result of one tool call."""

    model_config = _CONFIG
    type: Literal["tool_result"] = Field(default_factory=tag("tool_result"))
    id: str
    """The id of the call this answers."""
    name: str
    """The tool's name."""
    output: str | list[TextBlock | DataBlock] = ""
    """What the tool returned."""
    state: Annotated[ToolResultState, AS_STR] = ToolResultState.SUCCESS
    """How the call ended."""
    metadata: dict[str, Any] = Field(default_factory=dict)
    """Extra data (e.g. the offloaded path of a truncated result)."""

    def get_text(self) -> str:
        """The output's text, blocks joined by newlines."""
        if isinstance(self.output, str):
            return self.output
        return "\n".join(b.text for b in self.output if isinstance(b, TextBlock))


ContentBlock = Annotated[
    TextBlock | ThinkingBlock | DataBlock | HintBlock | ToolCallBlock | ToolResultBlock,
    Field(discriminator="type"),
]
"""Any block a message can hold."""
