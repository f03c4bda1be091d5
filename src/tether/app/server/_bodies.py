"""Request and response bodies: the library's own models, and the few envelopes around them."""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether.app.storage import SessionInfo
from tether.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import ChatUsage, Msg, ToolCallBlock

__all__ = [
    "AgentInfo",
    "AgentList",
    "InterruptAccepted",
    "MessagePage",
    "ReplyRequest",
    "ReplyResult",
    "ReplyStatus",
    "SessionCreate",
    "SessionList",
    "SessionPatch",
    "SessionStatus",
    "SessionView",
]

SessionStatus = Literal["idle", "running", "awaiting_confirmation", "awaiting_external"]
ReplyStatus = Literal[
    "completed", "awaiting_confirmation", "awaiting_external", "interrupted", "error"
]
_IDS = r"^[A-Za-z0-9._~:@-]{1,200}$"


class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)


class AgentInfo(_Body):
    """An agent the service serves."""

    id: str
    """The id sessions name it by."""
    name: str
    """The agent's name."""
    description: str
    """What it does (the first line of its system prompt unless it has a description)."""
    tools: list[str]
    """The names of its tools."""
    context_length: int | None = None
    """Its model's context window in tokens, when the model says."""


class AgentList(_Body):
    """Every agent the service serves."""

    agents: list[AgentInfo]


class SessionCreate(_Body):
    """`POST /v1/sessions`: start a session of an agent."""

    agent_id: str = Field(min_length=1, max_length=200)
    """The agent the session runs (see `GET /v1/agents`)."""
    session_id: str | None = Field(default=None, pattern=_IDS)
    """The id to give it (letters, digits, `._~:@-`); a new random one if omitted."""
    metadata: dict[str, Any] | None = None
    """Free-form JSON kept with the session."""


class SessionView(_Body):
    """A session: where it stands, its version, and what a pause waits for."""

    session_id: str
    agent_id: str
    status: SessionStatus
    """`running` while a reply runs; `awaiting_*` while a pause waits; else `idle`."""
    reply_id: str | None
    """The reply in progress or paused, if any."""
    pending: list[ToolCallBlock]
    """The tool calls a pause waits for, each with its `suggested_rules`."""
    version: int
    """The stored state's version (bumped by every save)."""
    last_event_id: int
    """The sequence number of the session's last logged event (0 if none)."""
    message_count: int
    created_at: datetime
    updated_at: datetime
    metadata: dict[str, Any]
    permission_mode: str
    """How calls that no rule decides are treated (a `PermissionMode` value)."""
    usage: ChatUsage
    """Tokens spent by every model call of the session, and their `cost` in USD (from
    the price table; `null` when no call had a known price)."""


class SessionPatch(_Body):
    """`PATCH /v1/sessions/{id}`: change a session's settings."""

    permission_mode: str = Field(min_length=1, max_length=50)
    """The new permission mode: `default`, `accept_edits`, `explore`, `bypass` or `dont_ask`."""


class SessionList(_Body):
    """The caller's sessions, most recently updated first."""

    sessions: list[SessionInfo]


class MessagePage(_Body):
    """A page of the conversation, oldest first."""

    messages: list[Msg]
    total: int
    """Messages in the whole conversation."""
    next_before: int | None
    """Pass as `before` for the previous page; None at the start."""


ReplyInput = (
    UserConfirmResultEvent
    | ExternalExecutionResultEvent
    | UserInterruptEvent
    | Msg
    | list[Msg]
    | None
)


_INPUT_SHAPES = (
    '`input` must be a message (`{"role": "user", "content": "hi"}`), a list of messages, '
    'a resume event (an object with a `"type"`) or null'
)


class ReplyRequest(_Body):
    """`POST /v1/sessions/{id}/replies`: a message (or list) starts a reply; an event resumes.

    `{"role": "user", "content": "..."}` is accepted for a message (its `name` becomes
    the role). `null` continues a reply left unfinished (e.g. by a restart).
    """

    input: ReplyInput

    @field_validator("input", mode="before")
    @classmethod
    def _shorthand(cls, value: Any) -> Any:
        def fill(item: Any) -> Any:
            if isinstance(item, dict) and "role" in item and "name" not in item:
                return {**item, "name": str(item["role"])}
            return item

        if isinstance(value, list):
            return [fill(v) for v in value]
        if value is not None and not isinstance(value, dict):  # e.g. "hi": one clear error
            raise ValueError(_INPUT_SHAPES + f"; got {type(value).__name__} {value!r:.40}")
        if isinstance(value, dict) and not {"type", "role", "name"} & set(value):
            raise ValueError(_INPUT_SHAPES + f"; got an object with keys {sorted(value)[:5]}")
        return fill(value)


class ReplyResult(_Body):
    """How a reply ended (or paused), for callers that do not stream."""

    status: ReplyStatus
    reply_id: str | None
    message: Msg | None = None
    """The final message, when `completed`/`interrupted`."""
    events: list[AgentEvent] = Field(default_factory=list)
    """The pause events (`awaiting_*`) or the error event (`error`)."""
    last_event_id: int
    """The sequence number of the reply's last event."""


class InterruptAccepted(_Body):
    """`POST /v1/sessions/{id}/interrupt` was taken."""

    status: Literal["interrupting", "idle"]
    """`interrupting`: a reply runs or waits and will end as interrupted; `idle`: none."""
    reply_id: str | None
