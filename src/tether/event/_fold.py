"""Fold a stream of events back into the reply `Msg` they describe."""

from __future__ import annotations

from collections.abc import Iterable

from tether.event._events import (
    AgentEvent,
    ModelCallEndEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from tether.message import (
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
)

__all__ = ["fold_event", "fold_events"]


def fold_events(events: Iterable[AgentEvent], msg: Msg | None = None) -> Msg:
    """Fold a reply's events into `msg` (default: a new empty assistant message); return it.

    Folding every event of a reply gives the final message the agent built.
    """
    folded = msg if msg is not None else Msg(name="agent", role="assistant")
    for event in events:
        fold_event(folded, event)
    return folded


def _find(msg: Msg, block_id: str, kind: type[object]) -> int:
    for i in range(len(msg.content) - 1, -1, -1):
        block = msg.content[i]
        if isinstance(block, kind) and getattr(block, "id", None) == block_id:
            return i
    return -1


def _set_call_states(msg: Msg, calls: list[ToolCallBlock], state: ToolCallState) -> None:
    for call in calls:
        i = _find(msg, call.id, ToolCallBlock)
        if i >= 0:
            msg.content[i] = call.model_copy(update={"state": state})


def fold_event(msg: Msg, event: AgentEvent) -> None:  # noqa: C901  # one branch per event type
    """Apply one streamed event to `msg`, as the agent built its reply."""
    match event:
        case TextBlockStartEvent():
            msg.content.append(TextBlock(id=event.block_id, text=""))
        case TextBlockDeltaEvent():
            i = _find(msg, event.block_id, TextBlock)
            if i >= 0:
                block = msg.content[i]
                assert isinstance(block, TextBlock)
                block.text += event.delta
        case ThinkingBlockStartEvent():
            msg.content.append(ThinkingBlock(id=event.block_id, thinking=""))
        case ThinkingBlockDeltaEvent() | ThinkingBlockEndEvent():
            i = _find(msg, event.block_id, ThinkingBlock)
            if i >= 0:
                thinking = msg.content[i]
                assert isinstance(thinking, ThinkingBlock)
                if isinstance(event, ThinkingBlockDeltaEvent):
                    thinking.thinking += event.delta
                else:
                    thinking.signature = event.signature
                    thinking.redacted = event.redacted
        case ToolCallStartEvent():
            msg.content.append(ToolCallBlock(id=event.block_id, name=event.name, input=""))
        case ToolCallDeltaEvent():
            i = _find(msg, event.block_id, ToolCallBlock)
            if i >= 0:
                call = msg.content[i]
                assert isinstance(call, ToolCallBlock)
                call.input += event.delta
        case ToolCallEndEvent():
            i = _find(msg, event.block_id, ToolCallBlock)
            if i >= 0:
                msg.content[i] = event.tool_call.model_copy()
            else:
                msg.content.append(event.tool_call.model_copy())
        case ToolResultStartEvent():
            msg.put_tool_result(
                ToolResultBlock(id=event.block_id, name=event.name, state=ToolResultState.RUNNING)
            )
        case ToolResultTextDeltaEvent():
            i = _find(msg, event.block_id, ToolResultBlock)
            if i >= 0:
                result = msg.content[i]
                assert isinstance(result, ToolResultBlock)
                if isinstance(result.output, str):
                    result.output += event.delta
        case ToolResultEndEvent():
            msg.put_tool_result(event.tool_result.model_copy())
            _set_call_states(
                msg,
                [c for c in msg.tool_calls if c.id == event.block_id],
                ToolCallState.FINISHED,
            )
        case RequireUserConfirmEvent():
            _set_call_states(msg, event.tool_calls, ToolCallState.ASKING)
        case RequireExternalExecutionEvent():
            _set_call_states(msg, event.tool_calls, ToolCallState.SUBMITTED)
        case ModelCallEndEvent() if event.usage is not None:
            msg.usage = event.usage if msg.usage is None else msg.usage + event.usage
        case ReplyEndEvent():
            msg.id = event.msg.id
            msg.metadata = dict(event.msg.metadata)
        case _:
            pass
