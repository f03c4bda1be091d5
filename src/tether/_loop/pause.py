"""A paused reply: what it waits for, the events that say so, and resuming it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Literal

from pydantic import BaseModel

from tether._loop.batch import parse_call
from tether._loop.confirm_rules import check_confirm_rules
from tether._loop.permission_check import remember_rules
from tether._loop.results import store_result
from tether.errors import NothingToResumeError, ResumeError
from tether.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ResumeEvent,
    ToolCallEndEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.event._ends import tool_result_end
from tether.message import (
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    detached,
)
from tether.state import AgentState
from tether.tool import ArgumentError, ToolBase, error_result

__all__ = [
    "apply_resume",
    "is_paused",
    "pause_events",
    "pause_msg",
    "remember_for_parents",
    "UndoUnannouncedWaits",
    "validate_resume",
    "waiting_calls",
]

Fit = Callable[[ToolResultBlock], Awaitable[ToolResultBlock]]
"""Makes the context's copy of a result (cut to the configured limit)."""
_WAITING = (ToolCallState.ASKING, ToolCallState.SUBMITTED)
_FINAL_STATES = (
    ToolResultState.SUCCESS,
    ToolResultState.ERROR,
    ToolResultState.DENIED,
    ToolResultState.INTERRUPTED,
)


def is_paused(state: AgentState) -> bool:
    """Whether the reply in progress waits for a confirmation or an external result."""
    msg = state.reply_msg()
    return msg is not None and any(c.state in _WAITING for c in msg.tool_calls)


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
        calls = [detached(c) for c in asking]
        yield RequireUserConfirmEvent(reply_id=reply_id, tool_calls=calls)
    if submitted:
        calls = [detached(c) for c in submitted]
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
    copy = detached(base)
    copy.content.append(notice)
    copy.metadata["awaiting"] = awaiting
    copy.metadata["pause_events"] = [e.model_dump(mode="json") for e in pauses]
    return copy


def validate_resume(
    state: AgentState, event: ResumeEvent, tools: Mapping[str, ToolBase] | None = None
) -> None:
    """Raise a `ResumeError` if `event` does not fit the paused reply; change nothing.

    With `tools` (the reply's tools by name), the rules sent with a confirmation are
    checked against the confirmed call too.
    """
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
    given: list[ToolCallBlock | ToolResultBlock]
    if isinstance(event, UserConfirmResultEvent):
        given = [r.tool_call for r in event.confirm_results]
        pending = waiting_calls(state, ToolCallState.ASKING)
        what = "awaiting confirmation"
    else:
        given = list(event.execution_results)
        pending = waiting_calls(state, ToolCallState.SUBMITTED)
        what = "awaiting an external result"
    if not given:
        raise ResumeError(f"{type(event).__name__} carries no results; send one per call")
    seen: set[str] = set()
    for block in given:
        if block.id in seen:
            raise ResumeError(f"tool call {block.id!r} appears twice; send one result per call")
        seen.add(block.id)
        call = pending.get(block.id)
        if call is None:
            waiting = ", ".join(sorted(pending)) or "none"
            raise ResumeError(
                f"tool call {block.id!r} is not {what} (calls {what}: {waiting}); if it was "
                "answered already, continue the reply with `reply(None)`"
            )
        _check_block(call, block)
    if isinstance(event, UserConfirmResultEvent) and tools is not None:
        check_confirm_rules(state, event, pending, tools)


def _check_block(call: ToolCallBlock, block: ToolCallBlock | ToolResultBlock) -> None:
    """The answer for `call` names its tool, and carries a usable input or a final result."""
    if block.name != call.name:
        raise ResumeError(
            f"tool call {call.id!r} is a call of {call.name!r}, but the answer names "
            f"{block.name!r}; keep the name of the pause event's call"
        )
    if isinstance(block, ToolResultBlock):
        if block.state not in _FINAL_STATES:
            raise ResumeError(
                f"the result for tool call {call.id!r} is {block.state.value!r}; send it once "
                f"it is final ({', '.join(s.value for s in _FINAL_STATES)})"
            )
    elif block.input != call.input and isinstance(parse_call(block), ArgumentError):
        raise ResumeError(
            f"the edited input of tool call {call.id!r} is not a JSON object: "
            f"{block.input[:200]!r}; send the arguments as a JSON object string"
        )


async def apply_resume(
    state: AgentState,
    event: ResumeEvent,
    fit: Fit,
    *,
    on_rejection: Literal["continue", "end_reply"],
    structured_model: type[BaseModel] | None = None,
) -> list[AgentEvent]:
    """Apply an event `validate_resume` accepted, all at once; return what it settled.

    Confirmed calls become ALLOWED (with the rules the user accepted remembered; an edited
    input is announced with a TOOL_CALL_END); rejected ones get a denied result, which
    ends the reply if `on_rejection` is `"end_reply"`. Results are cut to size before
    anything changes, so a cancelled resume leaves the state as it was.
    """
    cursor = state.reply
    assert cursor is not None, "validate_resume first"
    reply_id = cursor.reply_id
    settled = _settled_calls(state, event)
    kept = [await fit(result) for _, result in settled]
    edited: list[ToolCallBlock] = []
    if isinstance(event, UserConfirmResultEvent):
        calls = waiting_calls(state, ToolCallState.ASKING)
        for answer in event.confirm_results:
            call = calls[answer.tool_call.id]
            if not answer.confirmed:
                continue
            if call.input != answer.tool_call.input:  # the user edited it: recount it
                state.note_text_change(call.input, answer.tool_call.input)
                call.input = answer.tool_call.input
                edited.append(detached(call))
            call.state = ToolCallState.ALLOWED
            remember_rules(state.permission_context, answer.rules)
    for (call, result), context_copy in zip(settled, kept, strict=True):
        store_result(state, call, context_copy, result, structured_model)
    if isinstance(event, UserInterruptEvent) or (
        on_rejection == "end_reply" and settled and isinstance(event, UserConfirmResultEvent)
    ):
        cursor.interrupted = True
    events: list[AgentEvent] = [
        ToolCallEndEvent(reply_id=reply_id, block_id=call.id, tool_call=call) for call in edited
    ]
    events += [tool_result_end(reply_id, call.id, result) for call, result in settled]
    return events


def remember_for_parents(state: AgentState, routed: ResumeEvent) -> None:
    """Remember in `state` the rules of a sub-agent's confirmed calls scoped to its parents.

    `routed` is the part of a resume event this agent passes on to one of its sub-agents
    (validated with it); each agent a qualified answer passes through remembers them, so
    every agent above the one that made the call does.
    """
    if not isinstance(routed, UserConfirmResultEvent):
        return
    for answer in routed.confirm_results:
        if answer.confirmed and answer.rules and answer.rules_scope == "agent_and_parents":
            remember_rules(state.permission_context, answer.rules)


def _settled_calls(
    state: AgentState, event: ResumeEvent
) -> list[tuple[ToolCallBlock, ToolResultBlock]]:
    """The calls `event` gives a result (interrupted, denied or external), with it."""
    if isinstance(event, UserInterruptEvent):
        msg = state.reply_msg()
        calls = msg.tool_calls if msg is not None else []
        text = "The user interrupted the reply."
        return [
            (c, error_result(c, text, ToolResultState.INTERRUPTED))
            for c in calls
            if c.state is not ToolCallState.FINISHED
        ]
    if isinstance(event, ExternalExecutionResultEvent):
        submitted = waiting_calls(state, ToolCallState.SUBMITTED)
        return [(submitted[r.id], detached(r)) for r in event.execution_results]
    asking = waiting_calls(state, ToolCallState.ASKING)
    text = "The user rejected this call. Do not retry it as is; ask or try another way."
    return [
        (
            asking[a.tool_call.id],
            error_result(
                asking[a.tool_call.id],
                f"{text} Their reason: {a.reason}" if a.reason else text,
                ToolResultState.DENIED,
            ),
        )
        for a in event.confirm_results
        if not a.confirmed
    ]


class UndoUnannouncedWaits:
    """If the block fails, calls it set waiting go back to how they were.

    An acting step marks calls ASKING or SUBMITTED as it checks them, but the pause is
    announced only after the whole batch ran; a call must not wait for a pause nobody
    was told about (a new message would be refused for a reason the caller never saw).
    """

    __slots__ = ("before", "calls")

    def __init__(self, calls: list[ToolCallBlock]) -> None:
        self.calls = calls
        self.before = [c.state for c in calls]

    def __enter__(self) -> None:
        return None

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if exc_type is None:
            return
        for call, state in zip(self.calls, self.before, strict=True):
            if call.state in _WAITING and state not in _WAITING:
                call.state = state
                if state is ToolCallState.PENDING:
                    call.suggested_rules = []  # as before its check
