"""A paused reply: what it waits for, the events that say so, and resuming it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Sequence
from typing import Literal

from tether.errors import NothingToResumeError, ResumeError
from tether.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import Msg, TextBlock, ToolCallBlock, ToolCallState, ToolResultState
from tether.permission._tool_check import remember_rules
from tether.state._state import AgentState
from tether.tool import error_result
from tether.tool._batch_run import Commit, interrupt_unfinished

__all__ = [
    "ResumeEvent",
    "apply_resume",
    "is_paused",
    "pause_events",
    "pause_msg",
    "validate_resume",
    "waiting_calls",
]

ResumeEvent = UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent
"""What the caller sends to resume (or abort) the paused reply."""


def is_paused(state: AgentState) -> bool:
    """Whether the reply in progress waits for a confirmation or an external result."""
    msg = state.reply_msg()
    waiting = (ToolCallState.ASKING, ToolCallState.SUBMITTED)
    return msg is not None and any(c.state in waiting for c in msg.tool_calls)


def waiting_calls(state: AgentState, wanted: ToolCallState) -> dict[str, ToolCallBlock]:
    """The reply's tool calls in state `wanted`, by id."""
    msg = state.reply_msg()
    calls = msg.tool_calls if msg is not None else []
    return {c.id: c for c in calls if c.state is wanted}


def pause_events(
    reply_id: str, asking: Sequence[ToolCallBlock], submitted: Sequence[ToolCallBlock]
) -> Iterator[AgentEvent]:
    """The events that end a paused stream: one per kind of wait, with copies of the calls."""
    if asking:
        calls = [c.model_copy() for c in asking]
        yield RequireUserConfirmEvent(reply_id=reply_id, tool_calls=calls)
    if submitted:
        calls = [c.model_copy() for c in submitted]
        yield RequireExternalExecutionEvent(reply_id=reply_id, tool_calls=calls)


def pause_msg(state: AgentState, pauses: list[AgentEvent]) -> Msg:
    """A copy of the paused reply that says what it waits for."""
    reply = state.reply_msg()
    base = reply if reply is not None else Msg(name="agent", role="assistant")
    awaiting = [
        "user_confirmation" if isinstance(e, RequireUserConfirmEvent) else "external_execution"
        for e in pauses
    ]
    calls = [c for e in pauses for c in getattr(e, "tool_calls", [])]
    names = ", ".join(f"{c.name}({c.input})" for c in calls) or "nothing"
    notice = TextBlock(text=f"[paused: waiting for {' and '.join(awaiting) or 'input'} of {names}]")
    return base.model_copy(
        update={
            "content": [*base.content, notice],
            "metadata": {
                **base.metadata,
                "awaiting": awaiting,
                "pause_events": [e.model_dump(mode="json") for e in pauses],
            },
        }
    )


def validate_resume(state: AgentState, event: ResumeEvent) -> None:
    """Raise a `ResumeError` if `event` does not fit the paused reply; change nothing."""
    cursor = state.reply
    if cursor is None:
        raise NothingToResumeError(
            f"there is no paused reply to resume with {type(event).__name__}; "
            "start a reply with a message"
        )
    if event.reply_id != cursor.reply_id:
        raise ResumeError(
            f"{type(event).__name__} is for reply {event.reply_id!r}, but the paused reply "
            f"is {cursor.reply_id!r}; use the reply_id of the pause event"
        )
    if isinstance(event, UserInterruptEvent):
        return
    if isinstance(event, UserConfirmResultEvent):
        ids = [r.tool_call.id for r in event.confirm_results]
        pending = waiting_calls(state, ToolCallState.ASKING)
        what = "awaiting confirmation"
    else:
        ids = [r.id for r in event.execution_results]
        pending = waiting_calls(state, ToolCallState.SUBMITTED)
        what = "awaiting an external result"
    if not ids:
        raise ResumeError(f"{type(event).__name__} carries no results; send one per call")
    seen: set[str] = set()
    for call_id in ids:
        if call_id in seen:
            raise ResumeError(f"tool call {call_id!r} appears twice; send one result per call")
        seen.add(call_id)
        if call_id not in pending:
            waiting = ", ".join(sorted(pending)) or "none"
            raise ResumeError(f"tool call {call_id!r} is not {what} (calls {what}: {waiting})")


async def apply_resume(
    state: AgentState,
    event: ResumeEvent,
    commit: Commit,
    *,
    on_rejection: Literal["continue", "end_reply"],
) -> AsyncIterator[AgentEvent]:
    """Apply an event `validate_resume` accepted; yield the results it settles.

    Confirmed calls become ALLOWED (with the rules the user accepted remembered); rejected
    ones get a denied result, which ends the reply if `on_rejection` is `"end_reply"`.
    """
    cursor = state.reply
    assert cursor is not None, "validate_resume first"
    reply_id = cursor.reply_id
    if isinstance(event, UserInterruptEvent):
        msg = state.reply_msg()
        reply_calls = msg.tool_calls if msg is not None else []
        text = "The user interrupted the reply."
        for result in await interrupt_unfinished(reply_calls, commit, text):
            yield ToolResultEndEvent(reply_id=reply_id, block_id=result.id, tool_result=result)
        cursor.interrupted = True
        return
    if isinstance(event, ExternalExecutionResultEvent):
        calls = waiting_calls(state, ToolCallState.SUBMITTED)
        for result in event.execution_results:
            call = calls[result.id]
            fixed = result.model_copy(update={"name": call.name})
            await commit(call, fixed)
            yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=fixed)
        return
    calls = waiting_calls(state, ToolCallState.ASKING)
    for answer in event.confirm_results:
        call = calls[answer.tool_call.id]
        if answer.confirmed:
            if call.input != answer.tool_call.input:  # the user edited it: recount it
                state.note_text_change(call.input, answer.tool_call.input)
                call.input = answer.tool_call.input
            call.state = ToolCallState.ALLOWED
            remember_rules(state.permission_context, answer.rules)
            continue
        result = error_result(
            call,
            "The user rejected this call. Do not retry it as is; ask or try another way.",
            ToolResultState.DENIED,
        )
        await commit(call, result)
        yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=result)
        if on_rejection == "end_reply":
            cursor.interrupted = True
