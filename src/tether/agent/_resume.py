"""Resuming a paused reply: validate the whole event first, then apply it."""

from __future__ import annotations

from collections.abc import AsyncIterator

from tether.agent._acting import commit_result, interrupt_unfinished
from tether.agent._run import Run
from tether.errors import NothingToResumeError, ResumeError
from tether.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    ToolResultEndEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import ToolCallBlock, ToolCallState, ToolResultState
from tether.permission import PermissionBehavior, PermissionRule
from tether.state import AgentState
from tether.tool import error_result

__all__ = ["ResumeEvent", "apply_resume", "validate_resume"]

ResumeEvent = UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent


def _waiting(state: AgentState, wanted: ToolCallState) -> dict[str, ToolCallBlock]:
    msg = state.reply_msg()
    calls = msg.tool_calls if msg is not None else []
    return {c.id: c for c in calls if c.state is wanted}


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
        pending = _waiting(state, ToolCallState.ASKING)
        what = "awaiting confirmation"
    else:
        ids = [r.id for r in event.execution_results]
        pending = _waiting(state, ToolCallState.SUBMITTED)
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


def _remember(state: AgentState, rules: list[PermissionRule]) -> None:
    ctx = state.permission_context
    for rule in rules:
        bucket = {
            PermissionBehavior.ALLOW: ctx.allow_rules,
            PermissionBehavior.ASK: ctx.ask_rules,
            PermissionBehavior.DENY: ctx.deny_rules,
        }[rule.behavior]
        if rule not in bucket:
            bucket.append(rule)


async def apply_resume(run: Run, event: ResumeEvent) -> AsyncIterator[AgentEvent]:
    """Apply a validated resume event; yield the results it settles."""
    state, reply_id = run.state, run.reply_id
    if isinstance(event, UserInterruptEvent):
        msg = state.reply_msg()
        reply_calls = msg.tool_calls if msg is not None else []
        text = "The user interrupted the reply."
        for result in await interrupt_unfinished(run, reply_calls, text):
            yield ToolResultEndEvent(reply_id=reply_id, block_id=result.id, tool_result=result)
        run.cursor.interrupted = True
        return
    if isinstance(event, ExternalExecutionResultEvent):
        calls = _waiting(state, ToolCallState.SUBMITTED)
        for result in event.execution_results:
            call = calls[result.id]
            fixed = result.model_copy(update={"name": call.name})
            await commit_result(run, call, fixed)
            yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=fixed)
        return
    calls = _waiting(state, ToolCallState.ASKING)
    for answer in event.confirm_results:
        call = calls[answer.tool_call.id]
        if answer.confirmed:
            call.input = answer.tool_call.input
            call.state = ToolCallState.ALLOWED
            _remember(state, list(answer.rules))
            continue
        result = error_result(
            call,
            "The user rejected this call. Do not retry it as is; ask or try another way.",
            ToolResultState.DENIED,
        )
        await commit_result(run, call, result)
        yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=result)
        if run.agent.react_config.on_rejection == "end_reply":
            run.cursor.interrupted = True
