"""Every event an agent emits or accepts, one pydantic model each.

Order of a reply's events:

```
REPLY_START
  ( MODEL_CALL_START
      [MODEL_RETRY ...]                       a retryable failure, then a new attempt
      (THINKING_BLOCK_START, THINKING_BLOCK_DELTA*, THINKING_BLOCK_END)*
      (TEXT_BLOCK_START, TEXT_BLOCK_DELTA*, TEXT_BLOCK_END)*
      (TOOL_CALL_START, TOOL_CALL_DELTA*, TOOL_CALL_END)*
    MODEL_CALL_END
    ( TOOL_RESULT_START, TOOL_RESULT_TEXT_DELTA*, TOOL_RESULT_END )*   per batch
  )*
REPLY_END
```

Context compression (CONTEXT_COMPRESSED) and plugin scheduling (PLUGIN_ACTIVATED,
PLUGIN_SLEPT) come where they happen. A reply that pauses ends its stream with
REQUIRE_USER_CONFIRM and/or REQUIRE_EXTERNAL_EXECUTION and no REPLY_END; the stream
that resumes it starts without REPLY_START, with a TOOL_CALL_END for each call whose
input the user edited and a TOOL_RESULT_END for each call the resume event settled
(rejected, externally executed or interrupted), and ends with REPLY_END. Folding every
event of a reply into a `Msg` (`fold_event`) gives the final message, except that
a TOOL_RESULT_END carries a result's full output where the context keeps a cut copy.
Events are copies: changing one changes nothing the agent stores.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, model_validator

from tether._fast import AS_STR
from tether._rule import PermissionRule
from tether.event._stamps import event_id, event_time
from tether.message import ChatUsage, Msg, ToolCallBlock, ToolResultBlock, ToolResultState

__all__ = [
    "AgentEvent",
    "ConfirmResult",
    "ContextCompressedEvent",
    "CustomEvent",
    "ErrorEvent",
    "EventBase",
    "EventType",
    "ExternalExecutionResultEvent",
    "ModelCallEndEvent",
    "ModelCallStartEvent",
    "ModelRetryEvent",
    "PluginActivatedEvent",
    "PluginSleptEvent",
    "ReplyEndEvent",
    "ReplyStartEvent",
    "RequireExternalExecutionEvent",
    "RequireUserConfirmEvent",
    "ResumeEvent",
    "SubAgentEvent",
    "TextBlockDeltaEvent",
    "TextBlockEndEvent",
    "TextBlockStartEvent",
    "ThinkingBlockDeltaEvent",
    "ThinkingBlockEndEvent",
    "ThinkingBlockStartEvent",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolResultEndEvent",
    "ToolResultStartEvent",
    "ToolResultTextDeltaEvent",
    "UserConfirmResultEvent",
    "UserInterruptEvent",
    "event_adapter",
]


class EventType(StrEnum):
    """The closed set of event types."""

    REPLY_START = "reply_start"
    REPLY_END = "reply_end"
    MODEL_CALL_START = "model_call_start"
    MODEL_CALL_END = "model_call_end"
    TEXT_BLOCK_START = "text_block_start"
    TEXT_BLOCK_DELTA = "text_block_delta"
    TEXT_BLOCK_END = "text_block_end"
    THINKING_BLOCK_START = "thinking_block_start"
    THINKING_BLOCK_DELTA = "thinking_block_delta"
    THINKING_BLOCK_END = "thinking_block_end"
    TOOL_CALL_START = "tool_call_start"
    TOOL_CALL_DELTA = "tool_call_delta"
    TOOL_CALL_END = "tool_call_end"
    TOOL_RESULT_START = "tool_result_start"
    TOOL_RESULT_TEXT_DELTA = "tool_result_text_delta"
    TOOL_RESULT_END = "tool_result_end"
    REQUIRE_USER_CONFIRM = "require_user_confirm"
    REQUIRE_EXTERNAL_EXECUTION = "require_external_execution"
    USER_CONFIRM_RESULT = "user_confirm_result"
    EXTERNAL_EXECUTION_RESULT = "external_execution_result"
    USER_INTERRUPT = "user_interrupt"
    MODEL_RETRY = "model_retry"
    CONTEXT_COMPRESSED = "context_compressed"
    PLUGIN_ACTIVATED = "plugin_activated"
    PLUGIN_SLEPT = "plugin_slept"
    ERROR = "error"
    CUSTOM = "custom"
    SUB_AGENT = "sub_agent"


class EventBase(BaseModel):
    """Fields every event has."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    reply_id: str
    """The reply this event belongs to."""
    id: str = Field(default_factory=event_id)
    """Event id (SSE clients resume from it)."""
    created_at: str = Field(default_factory=event_time)
    """ISO 8601 time the event was made (UTC, microseconds). The delta events of one block
    made within a millisecond of each other may share the first one's time."""


class ReplyStartEvent(EventBase):
    """A new reply begins."""

    type: Annotated[Literal[EventType.REPLY_START], AS_STR] = EventType.REPLY_START
    name: str
    """The agent's name."""


class ReplyEndEvent(EventBase):
    """The reply is complete; `msg` is the final message."""

    type: Annotated[Literal[EventType.REPLY_END], AS_STR] = EventType.REPLY_END
    msg: Msg
    """The whole reply message."""


class ModelCallStartEvent(EventBase):
    """A model call (one reasoning step) begins."""

    type: Annotated[Literal[EventType.MODEL_CALL_START], AS_STR] = EventType.MODEL_CALL_START
    model_name: str
    """The model that is called."""


class ModelCallEndEvent(EventBase):
    """A model call ended; its usage, if the provider reported one."""

    type: Annotated[Literal[EventType.MODEL_CALL_END], AS_STR] = EventType.MODEL_CALL_END
    model_name: str
    """The model that answered (the fallback's name if it took over)."""
    usage: ChatUsage | None = None
    """Tokens spent on this call."""
    stop_reason: str | None = None
    """Why the model stopped, if it said: `stop`, `length` (the answer was cut short by the
    output token limit), `content_filter` or `other`."""
    cost: float | None = None
    """USD spent on this call, from the price table (`tether.model.cost`); `None` when the
    model has no price."""


class _BlockEvent(EventBase):
    block_id: str
    """The block the event belongs to."""


class TextBlockStartEvent(_BlockEvent):
    """A text block begins."""

    type: Annotated[Literal[EventType.TEXT_BLOCK_START], AS_STR] = EventType.TEXT_BLOCK_START


class TextBlockDeltaEvent(_BlockEvent):
    """More text for a text block."""

    type: Annotated[Literal[EventType.TEXT_BLOCK_DELTA], AS_STR] = EventType.TEXT_BLOCK_DELTA
    delta: str
    """The new text."""


class TextBlockEndEvent(_BlockEvent):
    """A text block is complete."""

    type: Annotated[Literal[EventType.TEXT_BLOCK_END], AS_STR] = EventType.TEXT_BLOCK_END


class ThinkingBlockStartEvent(_BlockEvent):
    """A thinking block begins."""

    type: Annotated[Literal[EventType.THINKING_BLOCK_START], AS_STR] = (
        EventType.THINKING_BLOCK_START
    )


class ThinkingBlockDeltaEvent(_BlockEvent):
    """More reasoning text."""

    type: Annotated[Literal[EventType.THINKING_BLOCK_DELTA], AS_STR] = (
        EventType.THINKING_BLOCK_DELTA
    )
    delta: str
    """The new text."""


class ThinkingBlockEndEvent(_BlockEvent):
    """A thinking block is complete."""

    type: Annotated[Literal[EventType.THINKING_BLOCK_END], AS_STR] = EventType.THINKING_BLOCK_END
    signature: str | None = None
    """The provider's signature for the block, if any."""
    redacted: bool = False
    """The provider withheld the reasoning; `signature` holds it encrypted."""


class ToolCallStartEvent(_BlockEvent):
    """The model begins a tool call; `block_id` is the call id."""

    type: Annotated[Literal[EventType.TOOL_CALL_START], AS_STR] = EventType.TOOL_CALL_START
    name: str
    """The tool's name."""


class ToolCallDeltaEvent(_BlockEvent):
    """More JSON of a tool call's arguments."""

    type: Annotated[Literal[EventType.TOOL_CALL_DELTA], AS_STR] = EventType.TOOL_CALL_DELTA
    delta: str
    """The new argument text."""


class ToolCallEndEvent(_BlockEvent):
    """A tool call is complete."""

    type: Annotated[Literal[EventType.TOOL_CALL_END], AS_STR] = EventType.TOOL_CALL_END
    tool_call: ToolCallBlock
    """The whole call."""


class ToolResultStartEvent(_BlockEvent):
    """A tool begins to run; `block_id` is the call id."""

    type: Annotated[Literal[EventType.TOOL_RESULT_START], AS_STR] = EventType.TOOL_RESULT_START
    name: str
    """The tool's name."""


class ToolResultTextDeltaEvent(_BlockEvent):
    """Partial output of a running tool."""

    type: Annotated[Literal[EventType.TOOL_RESULT_TEXT_DELTA], AS_STR] = (
        EventType.TOOL_RESULT_TEXT_DELTA
    )
    delta: str
    """The new output text."""


class ToolResultEndEvent(_BlockEvent):
    """A tool call has its result (the full output, even when the context copy is cut)."""

    type: Annotated[Literal[EventType.TOOL_RESULT_END], AS_STR] = EventType.TOOL_RESULT_END
    tool_result: ToolResultBlock
    """The result."""

    @property
    def state(self) -> ToolResultState:
        """How the call ended."""
        return self.tool_result.state


class RequireUserConfirmEvent(EventBase):
    """The reply pauses until the user confirms or rejects these calls."""

    type: Annotated[Literal[EventType.REQUIRE_USER_CONFIRM], AS_STR] = (
        EventType.REQUIRE_USER_CONFIRM
    )
    tool_calls: list[ToolCallBlock]
    """The calls awaiting confirmation, each with its `suggested_rules`."""


class RequireExternalExecutionEvent(EventBase):
    """The reply pauses until these calls' results come from outside."""

    type: Annotated[Literal[EventType.REQUIRE_EXTERNAL_EXECUTION], AS_STR] = (
        EventType.REQUIRE_EXTERNAL_EXECUTION
    )
    tool_calls: list[ToolCallBlock]
    """The calls to execute outside the agent."""


class ConfirmResult(BaseModel):
    """The user's answer for one call awaiting confirmation."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    confirmed: bool
    """Run it (`True`) or reject it (`False`)."""
    tool_call: ToolCallBlock
    """The call, possibly with edited `input`."""
    rules: list[PermissionRule] = Field(default_factory=list)
    """Rules to remember, so matching calls run without asking from now on."""
    reason: str | None = None
    """Why the user rejected it; the model sees it in the denied result."""
    rules_scope: Literal["agent", "agent_and_parents"] = "agent"
    """Where `rules` are remembered: in the agent that made the call (for a sub-agent's
    call, that sub-agent only), or also in every agent above it, up to the outermost."""

    @model_validator(mode="after")
    def _encode_edited_input(self) -> ConfirmResult:
        # `tool_call.model_copy(update={"input": {...}})` skips the block's own encoding.
        edited: Any = self.tool_call.input
        if isinstance(edited, dict):
            self.tool_call = self.tool_call.model_copy(
                update={"input": json.dumps(edited, ensure_ascii=False)}
            )
        return self


class UserConfirmResultEvent(EventBase):
    """Resume a reply paused for confirmation."""

    type: Annotated[Literal[EventType.USER_CONFIRM_RESULT], AS_STR] = EventType.USER_CONFIRM_RESULT
    confirm_results: list[ConfirmResult]
    """One answer per call being confirmed."""


class ExternalExecutionResultEvent(EventBase):
    """Resume a reply paused for external execution."""

    type: Annotated[Literal[EventType.EXTERNAL_EXECUTION_RESULT], AS_STR] = (
        EventType.EXTERNAL_EXECUTION_RESULT
    )
    execution_results: list[ToolResultBlock]
    """One result per externally executed call (matched by `id`)."""


class UserInterruptEvent(EventBase):
    """Abort the paused reply: pending calls end as interrupted."""

    type: Annotated[Literal[EventType.USER_INTERRUPT], AS_STR] = EventType.USER_INTERRUPT


ResumeEvent = UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent
"""What the caller sends to resume (or abort) a paused reply."""


class ModelRetryEvent(EventBase):
    """A model call failed with a retryable error and will be tried again."""

    type: Annotated[Literal[EventType.MODEL_RETRY], AS_STR] = EventType.MODEL_RETRY
    model_name: str
    """The model that failed."""
    attempt: int
    """The attempt that failed, from 1."""
    error: str
    """What went wrong."""
    delay: float
    """Seconds before the next attempt."""
    next_model_name: str
    """The model of the next attempt (differs when falling back)."""


class ContextCompressedEvent(EventBase):
    """The context was compressed."""

    type: Annotated[Literal[EventType.CONTEXT_COMPRESSED], AS_STR] = EventType.CONTEXT_COMPRESSED
    before_tokens: int
    """Estimated context tokens before."""
    after_tokens: int
    """Estimated context tokens after."""
    compressed_messages: int = 0
    """How many messages were summarised or dropped."""
    offload_path: str | None = None
    """Where the compressed messages were written, if an offloader is set."""
    summarised: bool = True
    """False when summarising failed and messages were dropped with a notice."""


class PluginActivatedEvent(EventBase):
    """A plugin woke up (or its activation was extended)."""

    type: Annotated[Literal[EventType.PLUGIN_ACTIVATED], AS_STR] = EventType.PLUGIN_ACTIVATED
    module_name: str
    """The plugin's module name."""
    rounds_left: int
    """Replies it stays awake for."""


class PluginSleptEvent(EventBase):
    """A plugin's activation ran out and it went to sleep."""

    type: Annotated[Literal[EventType.PLUGIN_SLEPT], AS_STR] = EventType.PLUGIN_SLEPT
    module_name: str
    """The plugin's module name."""


class ErrorEvent(EventBase):
    """The reply failed (sent by the HTTP service; in-process callers get the exception)."""

    type: Annotated[Literal[EventType.ERROR], AS_STR] = EventType.ERROR
    error_type: str
    """The exception's class name."""
    message: str
    """The exception's message."""


class CustomEvent(EventBase):
    """An event of the application's own (e.g. from a middleware or a tool)."""

    type: Annotated[Literal[EventType.CUSTOM], AS_STR] = EventType.CUSTOM
    name: str
    """The application's name for it."""
    data: dict[str, Any] = Field(default_factory=dict)
    """Its payload (JSON-serialisable)."""


_PlainEvent = Annotated[
    ReplyStartEvent
    | ReplyEndEvent
    | ModelCallStartEvent
    | ModelCallEndEvent
    | TextBlockStartEvent
    | TextBlockDeltaEvent
    | TextBlockEndEvent
    | ThinkingBlockStartEvent
    | ThinkingBlockDeltaEvent
    | ThinkingBlockEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | ToolResultStartEvent
    | ToolResultTextDeltaEvent
    | ToolResultEndEvent
    | RequireUserConfirmEvent
    | RequireExternalExecutionEvent
    | UserConfirmResultEvent
    | ExternalExecutionResultEvent
    | UserInterruptEvent
    | ModelRetryEvent
    | ContextCompressedEvent
    | PluginActivatedEvent
    | PluginSleptEvent
    | ErrorEvent
    | CustomEvent,
    Field(discriminator="type"),
]
"""Any event but a `SubAgentEvent` (what one sub-agent's own stream holds)."""


class SubAgentEvent(EventBase):
    """An event of a sub-agent, in its parent's stream (`reply_id` is the parent's reply).

    `event` is the sub-agent's own event, unchanged (its `reply_id` is the sub-agent's
    reply); a grandchild's event is wrapped once, with the whole path.
    """

    type: Annotated[Literal[EventType.SUB_AGENT], AS_STR] = EventType.SUB_AGENT
    agent_path: list[str]
    """The names of the agents from the parent down to the one that emitted it, e.g.
    `["researcher"]` (`["researcher", "fetcher"]` for a grandchild)."""
    call_path: list[str]
    """The ids of the tool calls that started each agent of `agent_path` (the first is the
    parent's tool-call id)."""
    event: _PlainEvent
    """The sub-agent's event."""


AgentEvent = Annotated[_PlainEvent | SubAgentEvent, Field(discriminator="type")]
"""Any event; parse one from JSON with `event_adapter.validate_json`."""


class _LazyEventAdapter:
    """A `TypeAdapter[AgentEvent]` built on first use (keeps `import tether` fast)."""

    _adapter: TypeAdapter[AgentEvent] | None = None

    def __getattr__(self, name: str) -> Any:
        adapter = _LazyEventAdapter._adapter
        if adapter is None:
            adapter = _LazyEventAdapter._adapter = TypeAdapter(AgentEvent)
        return getattr(adapter, name)


event_adapter: TypeAdapter[AgentEvent] = _LazyEventAdapter()  # type: ignore[assignment]  # a lazy proxy
"""Parses and dumps `AgentEvent`s: `event_adapter.validate_json(...)`."""
