"""The acting step: check the next batch of tool calls, run the allowed ones, commit results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any, TypeGuard

from tether._loop.batch import (
    Finished,
    Outcome,
    call_arguments,
    cannot_emit,
    interrupt_unfinished,
    open_batch,
    run_batch,
)
from tether._loop.pause import UndoUnannouncedWaits
from tether._loop.results import UNKNOWN_OUTCOME
from tether._loop.run import Run
from tether.event import AgentEvent, EventType, ToolResultEndEvent, ToolResultStartEvent
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from tether.middleware import ActingCall, PermissionCall, chain_awaitable, chain_iterator
from tether.middleware._chain import close_stream, has_hook
from tether.permission import PermissionBehavior, PermissionDecision, PermissionEngine
from tether.permission._tool_check import check_tool_call
from tether.tool import (
    ArgumentError,
    Emit,
    ToolBase,
    ToolContext,
    ToolkitView,
    error_result,
    run_tool,
)

__all__ = ["act"]


async def act(run: Run) -> AsyncIterator[AgentEvent]:
    """Check the next batch; answer refused calls at once; run the allowed ones."""
    state, reply_id = run.state, run.reply_id
    msg = state.reply_msg()
    assert msg is not None
    view = await run.agent.toolkit_view(state, run.structured_model, with_prompt=False)
    if any(c.state is ToolCallState.RUNNING for c in msg.tool_calls):
        async for event in _recover(run, view, msg.tool_calls):
            yield event
    to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]] = []
    batch = open_batch(view, msg.tool_calls)
    with UndoUnannouncedWaits([call for call, _ in batch]):
        for call, args in batch:
            tool = view.tools.get(call.name)
            pending = call.state is ToolCallState.PENDING  # not yet checked
            answer = await _check(run, view, call, tool, args)
            if answer is not None:
                await run.commit_and_save(call, answer)
                if pending and run.announces(EventType.TOOL_RESULT_START):
                    yield ToolResultStartEvent(reply_id=reply_id, block_id=call.id, name=call.name)
                yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=answer)
            elif call.state is ToolCallState.ALLOWED and tool is not None:
                to_run.append((call, tool, None if isinstance(args, ArgumentError) else args))
        if to_run:
            for call, _, _ in to_run:
                call.state = ToolCallState.RUNNING
            await run.save()  # the claim: a racing worker's save fails before its tool runs
            lone = _lone_call(run, to_run)
            running = (
                run_batch(to_run, partial(_events, run))
                if lone is None
                else _events(run, *to_run[0], None, Outcome())
            )
            try:
                async for item in running:
                    if isinstance(item, Finished):
                        await run.commit_and_save(item.call, item.result)
                        continue
                    if lone is not None and _settles(item, lone):
                        await run.commit_and_save(lone, item.tool_result)
                    yield item
            except BaseException:  # stopped: close the batch now (its lone call's too)
                await close_stream(running)
                raise
            finally:
                await interrupt_unfinished([c for c, _, _ in to_run], run.commit)


def _lone_call(
    run: Run, to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]
) -> ToolCallBlock | None:
    """The batch's one call when nothing stands between its tool and the loop, else None.

    A lone tool that cannot emit runs inline and no `on_acting` hook can drop or rewrite
    its result event, so that event's result is the call's: the loop reads `run_tool`'s
    stream itself (no `run_batch` layer, no `Finished` values).
    """
    if len(to_run) != 1 or has_hook(run.agent.middlewares, "on_acting"):
        return None
    return to_run[0][0] if cannot_emit(to_run[0][1]) else None


def _settles(event: AgentEvent, call: ToolCallBlock) -> TypeGuard[ToolResultEndEvent]:
    """`event` is the first result event of `call` (the one committed)."""
    return (
        isinstance(event, ToolResultEndEvent)
        and event.block_id == call.id
        and call.state is not ToolCallState.FINISHED
    )


async def _check(
    run: Run,
    view: ToolkitView,
    call: ToolCallBlock,
    tool: ToolBase | None,
    args: dict[str, Any] | ArgumentError,
) -> ToolResultBlock | None:
    """The answer to a call that must not run (unknown, bad arguments, denied), else None.

    A call not yet checked goes through the permission hooks (and is marked allowed,
    asking or submitted); a confirmed one is checked once more (a deny still wins).
    """
    if tool is None:  # unknown, or its plugin fell asleep between pause and resume
        return error_result(call, view.unknown_tool_message(call.name, run.state))
    if isinstance(args, ArgumentError):
        return error_result(call, f"Error: {args}")
    check = PermissionCall(
        agent=run.agent,
        state=run.state,
        reply_id=run.reply_id,
        tool_call=call,
        tool=tool,
        tool_input=args,
    )
    if call.state is not ToolCallState.PENDING:  # confirmed (perhaps edited): checked again
        answer = await _recheck(call, check)
        if answer is None and tool.is_external_tool:  # now the caller's to run
            call.state = ToolCallState.SUBMITTED
        return answer
    return await check_tool_call(run.agent.middlewares, check)


async def _engine_decision(check: PermissionCall) -> PermissionDecision:
    engine = PermissionEngine(check.state.permission_context)
    return await engine.decide(
        check.tool, check.tool_input, check.state.tool_state_for(check.tool.name)
    )


async def _recheck(call: ToolCallBlock, check: PermissionCall) -> ToolResultBlock | None:
    """A confirmed call is checked once more before it runs: a deny still wins.

    The user may have edited the call into one a deny rule, a sensitive path or the work
    dirs forbid (`ls /` → `rm victim.txt`); confirming never overrides a DENY. Any other
    decision stands confirmed.
    """
    decision: PermissionDecision = await chain_awaitable(
        check.agent.middlewares, "on_check_permission", check, _engine_decision
    )
    if decision.behavior is not PermissionBehavior.DENY:
        return None
    return error_result(
        call,
        f"Permission denied: {decision.reason}. The user confirmed this call, but it is "
        "denied as it stands. Do not retry it as is.",
        ToolResultState.DENIED,
    )


async def _recover(
    run: Run, view: ToolkitView, calls: list[ToolCallBlock]
) -> AsyncIterator[AgentEvent]:
    """Settle calls found running (their process died): never run one twice silently.

    An idempotent tool runs again; any other call is answered as interrupted, with a
    result that tells the model the outcome is unknown.
    """
    for call in calls:
        if call.state is not ToolCallState.RUNNING:
            continue
        tool = view.tools.get(call.name)
        if tool is not None and tool.is_idempotent:
            call.state = ToolCallState.ALLOWED
            continue
        answer = error_result(call, UNKNOWN_OUTCOME, ToolResultState.INTERRUPTED)
        await run.commit_and_save(call, answer)
        yield ToolResultEndEvent(reply_id=run.reply_id, block_id=call.id, tool_result=answer)


def _events(
    run: Run,
    call: ToolCallBlock,
    tool: ToolBase,
    args: dict[str, Any] | None,
    emit: Emit | None,
    outcome: Outcome,
) -> AsyncIterator[AgentEvent]:
    context = ToolContext(
        tool_call_id=call.id,
        reply_id=run.reply_id,
        permission_context=run.state.permission_context,
        tool_state=run.state.tool_state_for(tool.name),
        session_state=run.state,
        emit=emit,
    )
    announce = run.announces(EventType.TOOL_RESULT_START)
    if not has_hook(run.agent.middlewares, "on_acting"):
        # No hook between the tool and the loop: its result event is its own result.
        return run_tool(tool, call, context, args, announce=announce)
    acting = ActingCall(
        agent=run.agent, state=run.state, reply_id=run.reply_id, tool_call=call, tool=tool
    )
    return chain_iterator(
        run.agent.middlewares,
        "on_acting",
        acting,
        # A middleware may rewrite the input (parsed afresh), not the id or name the
        # result is recorded under.
        lambda c: _recorded(
            outcome,
            run_tool(
                c.tool,
                call
                if c.tool_call is call
                else call.model_copy(update={"input": c.tool_call.input}),
                context,
                args if c.tool_call is call else call_arguments(c.tool_call),
                announce=announce,
            ),
        ),
    )


async def _recorded(
    outcome: Outcome, events: AsyncIterator[AgentEvent]
) -> AsyncIterator[AgentEvent]:
    """`run_tool`'s events, keeping its result (the last event) as the call's outcome."""
    try:
        async for event in events:
            if isinstance(event, ToolResultEndEvent):
                outcome.result = event.tool_result
            yield event
    finally:
        await close_stream(events)
