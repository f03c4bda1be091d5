"""The acting step: check the next batch of tool calls, run the allowed ones, commit results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from tether import middleware
from tether._loop.assign import put
from tether._loop.batch import (
    Finished,
    Outcome,
    call_arguments,
    interrupt_unfinished,
    open_batch,
    returns_whole,
    run_batch,
)
from tether._loop.current import reply_message
from tether._loop.pause import UndoUnannouncedWaits
from tether._loop.permission_check import decide_with_hooks, defers_to_tool
from tether._loop.results import UNKNOWN_OUTCOME
from tether._loop.run import Run
from tether.event import AgentEvent, EventType, ToolResultEndEvent, trusted_events
from tether.message import (
    ContentBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
)
from tether.middleware import chain_iterator
from tether.middleware._chain import close_stream, has_hook, has_rewriting_hook
from tether.permission import PermissionBehavior, PermissionDecision
from tether.tool import (
    ArgumentError,
    Emit,
    ToolBase,
    ToolContext,
    ToolkitView,
    error_result,
    result_of,
    run_tool,
)
from tether.tool._base import allowed_by_default, allows_every_call

__all__ = ["act"]

_ALLOWED = ToolCallState.ALLOWED


async def act(run: Run) -> AsyncIterator[AgentEvent]:
    """Check the next batch; answer refused calls at once; run the allowed ones."""
    state, reply_id = run.state, run.reply_id
    msg = reply_message(state)
    assert msg is not None
    view = await run.view(with_prompt=False)
    calls, found_running = _calls(msg.content)
    if found_running:
        async for event in _recover(run, view, calls):
            yield event
    to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]] = []
    batch = open_batch(view, calls)
    with UndoUnannouncedWaits([call for call, _ in batch]):
        for call, args in batch:
            tool = view.tools.get(call.name)
            pending = call.state is ToolCallState.PENDING  # not yet checked
            answer = await _check(run, view, call, tool, args)
            if answer is not None:
                await run.commit_and_save(call, answer)
                for event in _answered(run, call, answer, started=not pending):
                    yield event
            elif call.state is ToolCallState.ALLOWED and tool is not None:
                to_run.append((call, tool, None if isinstance(args, ArgumentError) else args))
        if not to_run:
            return
        for event in await _claim(run, to_run):
            yield event
        try:
            if _lone_call(run, to_run) is not None:  # nothing between the tool and the loop
                lone, lone_tool, lone_args = to_run[0]
                if run.announces(EventType.TOOL_RESULT_START):
                    yield trusted_events.tool_result_start(reply_id, lone.id, lone.name)
                context = _context(run, lone, lone_tool, None)
                result = await result_of(lone_tool, lone, context, lone_args)
                await run.commit_and_save(lone, result)
                if run.announces(EventType.TOOL_RESULT_END):
                    yield trusted_events.tool_result_end(reply_id, lone.id, result)
                return
            running = run_batch(to_run, partial(_events, run))
            try:
                async for item in running:
                    if isinstance(item, Finished):
                        await run.commit_and_save(item.call, item.result)
                        continue
                    yield item
            except BaseException:  # stopped: close the batch now
                await close_stream(running)
                raise
        finally:
            await interrupt_unfinished([c for c, _, _ in to_run], run.commit)


def _calls(content: list[ContentBlock]) -> tuple[list[ToolCallBlock], bool]:
    """The reply's tool calls, and whether one was found running (its process died)."""
    calls: list[ToolCallBlock] = []
    running = False
    for block in content:
        if isinstance(block, ToolCallBlock):
            calls.append(block)
            running = running or block.state is ToolCallState.RUNNING
    return calls, running


def _answered(
    run: Run, call: ToolCallBlock, answer: ToolResultBlock, *, started: bool
) -> list[AgentEvent]:
    """The events of a call answered without running (its START only if not `started`).

    First, those of a model step whose save point was written with the answer's.
    """
    events: list[AgentEvent] = [*run.released()]
    if not started and run.announces(EventType.TOOL_RESULT_START):
        events.append(trusted_events.tool_result_start(run.reply_id, call.id, call.name))
    if run.announces(EventType.TOOL_RESULT_END):
        events.append(trusted_events.tool_result_end(run.reply_id, call.id, answer))
    return events


async def _claim(
    run: Run, to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]
) -> tuple[AgentEvent, ...]:
    """The claim: mark the batch's calls running and save (a racing worker fails here).

    Returns the events of a model step saved with the claim, to announce now.
    """
    for call, _, _ in to_run:
        put(call, "state", ToolCallState.RUNNING)
    await run.save()
    return run.released()


def _lone_call(
    run: Run, to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]
) -> ToolCallBlock | None:
    """The batch's one call when nothing stands between its tool and the loop, else None.

    A lone tool that returns its output whole (it cannot emit, nothing streams) and no
    `on_acting` hook to drop or rewrite its result: the loop awaits the tool's result
    itself (`result_of`: no event stream, no `run_batch` layer, no `Finished` values).
    """
    if len(to_run) != 1 or (run.agent.middlewares and has_hook(run.agent.middlewares, "on_acting")):
        return None
    return to_run[0][0] if returns_whole(to_run[0][1]) else None


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

    def record() -> middleware.PermissionCall:  # the hooks' record, built only if a hook is there
        return middleware.PermissionCall(
            agent=run.agent,
            state=run.state,
            reply_id=run.reply_id,
            tool_call=call,
            tool=tool,
            tool_input=args,
        )

    middlewares = run.agent.middlewares
    if (
        not (middlewares and has_hook(middlewares, "on_check_permission"))
        and defers_to_tool(run.state.permission_context)
        and allows_every_call(tool)
    ):  # the engine's answer, known without asking it
        decision = allowed_by_default()
    else:
        decision = await decide_with_hooks(middlewares, run.state, tool, args, record)
    if call.state is ToolCallState.PENDING:
        return _record_decision(call, tool, decision)
    # Confirmed (perhaps edited), checked again: the user may have edited the call into
    # one a deny rule, a sensitive path or the work dirs forbid (`ls /` → `rm victim.txt`);
    # confirming never overrides a DENY. Any other decision stands confirmed.
    if decision.behavior is PermissionBehavior.DENY:
        return error_result(
            call,
            f"Permission denied: {decision.reason}. The user confirmed this call, but it is "
            "denied as it stands. Do not retry it as is.",
            ToolResultState.DENIED,
        )
    if tool.is_external_tool:  # now the caller's to run
        call.state = ToolCallState.SUBMITTED
    return None


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
        yield trusted_events.tool_result_end(run.reply_id, call.id, answer)


def _context(run: Run, call: ToolCallBlock, tool: ToolBase, emit: Emit | None) -> ToolContext:
    state = run.state
    return ToolContext(
        tool_call_id=call.id,
        reply_id=run.reply_id,
        permission_context=state.permission_context,
        tool_state=state.tool_state_for(tool.name),
        session_state=state,
        emit=emit,
    )


def _record_decision(
    call: ToolCallBlock, tool: ToolBase, decision: PermissionDecision
) -> ToolResultBlock | None:
    """Record a first check's decision on the call.

    DENY returns the error result the model reads. Otherwise the call's state is set:
    ASKING (with the suggested rules), SUBMITTED for an external tool, else ALLOWED.
    """
    if decision.behavior is PermissionBehavior.DENY:
        return ToolResultBlock(
            id=call.id,
            name=call.name,
            output=f"Permission denied: {decision.reason}. Do not retry this call as is.",
            state=ToolResultState.DENIED,
        )
    if decision.behavior is PermissionBehavior.ASK:
        put(call, "state", ToolCallState.ASKING)
        put(call, "suggested_rules", list(decision.suggested_rules))
    else:
        put(call, "state", ToolCallState.SUBMITTED if tool.is_external_tool else _ALLOWED)
    return None


def _events(
    run: Run,
    call: ToolCallBlock,
    tool: ToolBase,
    args: dict[str, Any] | None,
    emit: Emit | None,
    outcome: Outcome,
) -> AsyncIterator[AgentEvent]:
    context = _context(run, call, tool, emit)
    announce = run.announces(EventType.TOOL_RESULT_START)
    if not run.agent.middlewares or not has_hook(run.agent.middlewares, "on_acting"):
        # No hook between the tool and the loop: its result event is its own result.
        return run_tool(tool, call, context, args, announce=announce)
    acting = middleware.ActingCall(
        agent=run.agent, state=run.state, reply_id=run.reply_id, tool_call=call, tool=tool
    )
    if not has_rewriting_hook(run.agent.middlewares, "on_acting"):
        # Hooks that only watch: the result event that reaches the loop is the tool's own.
        return chain_iterator(
            run.agent.middlewares,
            "on_acting",
            acting,
            lambda c: run_tool(tool, call, context, args, announce=announce),
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
