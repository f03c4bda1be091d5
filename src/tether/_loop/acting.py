"""The acting step: check the next batch of tool calls, run the allowed ones, commit results."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from tether import middleware
from tether._loop import nested
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
from tether.event import AgentEvent, EventType, ToolResultEndEvent, ToolResultStartEvent
from tether.event._ends import tool_result_end
from tether.message import (
    ContentBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
)
from tether.middleware._chain import chain_iterator, close_stream, has_hook, has_rewriting_hook
from tether.permission import PermissionBehavior, PermissionDecision
from tether.tool import (
    ArgumentError,
    Emit,
    ToolBase,
    ToolContext,
    ToolkitView,
    error_result,
    result_of,
)
from tether.tool._base import allowed_by_default, allows_every_call
from tether.tool._runner import run_tool

__all__ = ["act"]

_ALLOWED = ToolCallState.ALLOWED
_SUBMITTED = ToolCallState.SUBMITTED
_WAITS = ToolResultState.RUNNING
"""The state of the result a sub-agent's tool gives when its child paused."""


async def act(run: Run) -> AsyncIterator[AgentEvent]:  # noqa: C901 - each path inline: no layer
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
        nesting = _nests(run, to_run)
        for event in await _claim(run, to_run):
            yield event
        try:
            lone_path = _lone_path(run, to_run)
            if lone_path is _WATCHED:  # hooks that only watch the tool's own events
                lone, lone_tool, lone_args = to_run[0]
                events = _watched(run, lone, lone_tool, lone_args)
                try:
                    async for event in events:  # as `run_batch` would, without its layers
                        if isinstance(event, ToolResultEndEvent) and event.block_id == lone.id:
                            await run.commit_and_save(lone, event.tool_result)
                        yield event
                except BaseException:
                    await close_stream(events)
                    raise
                return
            if lone_path is _BARE:  # nothing between the tool and the loop
                lone, lone_tool, lone_args = to_run[0]
                if run.announces(EventType.TOOL_RESULT_START):
                    yield ToolResultStartEvent(reply_id=reply_id, block_id=lone.id, name=lone.name)
                context = _context(run, lone, lone_tool, None)
                result = await result_of(lone_tool, lone, context, lone_args)
                await run.commit_and_save(lone, result)
                if run.announces(EventType.TOOL_RESULT_END):
                    yield tool_result_end(reply_id, lone.id, result)
                return
            running = _nested(run, to_run) if nesting else run_batch(to_run, partial(_events, run))
            try:
                async for item in running:
                    if isinstance(item, Finished):
                        await run.commit_and_save(item.call, item.result)
                        continue
                    yield item
            except BaseException:  # stopped: close the batch now
                await close_stream(running)
                raise
        finally:  # a call waiting on its sub-agent (SUBMITTED) is not unfinished
            unfinished = [c for c, _, _ in to_run if c.state is not _SUBMITTED]
            await interrupt_unfinished(unfinished, run.commit)


def _nests(run: Run, to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]) -> bool:
    """Whether the batch runs a sub-agent (then, with other calls, saves are serialised)."""
    if not any(getattr(tool, "nests_agent", False) for _, tool, _ in to_run):
        return False
    if len(to_run) > 1 and run.lock is None:
        run.lock = asyncio.Lock()  # sub-agents save while the batch commits
    return True


async def _nested(
    run: Run, to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]
) -> AsyncIterator[AgentEvent]:
    """Run a claimed batch holding sub-agent calls (their save points are this run's).

    Results are committed here. A sub-agent that paused answers with a RUNNING result:
    its call waits on it (SUBMITTED) instead of finishing, and its result event is not
    passed on.
    """
    paused: set[str] = set()
    with nested.registered(run):
        running = run_batch(to_run, partial(_events, run))
        try:
            async for item in running:
                if isinstance(item, Finished):
                    call = item.call
                    if item.result.state is _WAITS and nested.delegated(run.state, call):
                        put(call, "state", _SUBMITTED)
                        paused.add(call.id)
                        await run.save()
                    else:
                        await run.commit_and_save(call, item.result)
                elif not (isinstance(item, ToolResultEndEvent) and item.block_id in paused):
                    yield item
        finally:
            await close_stream(running)


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
        events.append(ToolResultStartEvent(reply_id=run.reply_id, block_id=call.id, name=call.name))
    if run.announces(EventType.TOOL_RESULT_END):
        events.append(tool_result_end(run.reply_id, call.id, answer))
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


_BARE, _WATCHED = "bare", "watched"
"""How a lone call runs: awaited by the loop, or inside `on_acting` hooks that only watch."""


def _lone_path(
    run: Run, to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]
) -> str | None:
    """How the batch's one call runs when it needs no batch machinery, else None.

    A lone tool that returns its output whole (it cannot emit, nothing streams): with no
    `on_acting` hook, the loop awaits its result itself (`result_of`: no event stream, no
    `run_batch` layer, no `Finished` values); with hooks that only watch (none may drop
    or rewrite the result), the loop reads the tool's own events through them.
    """
    if len(to_run) != 1 or not returns_whole(to_run[0][1]):
        return None
    hooks = run.agent.middlewares
    if not hooks or not has_hook(hooks, "on_acting"):
        return _BARE
    return None if has_rewriting_hook(hooks, "on_acting") else _WATCHED


def _watched(
    run: Run, call: ToolCallBlock, tool: ToolBase, args: dict[str, Any] | None
) -> AsyncIterator[AgentEvent]:
    """A lone call's `run_tool` events inside the `on_acting` hooks that only watch them."""
    context = _context(run, call, tool, None)
    announce = run.announces(EventType.TOOL_RESULT_START)
    acting = middleware.ActingCall(
        agent=run.agent, state=run.state, reply_id=run.reply_id, tool_call=call, tool=tool
    )
    return chain_iterator(
        run.agent.middlewares,
        "on_acting",
        acting,
        lambda c: _whole_events(tool, call, context, args, announce),
    )


async def _whole_events(
    tool: ToolBase,
    call: ToolCallBlock,
    context: ToolContext,
    args: dict[str, Any] | None,
    announce: bool,
) -> AsyncIterator[AgentEvent]:
    """`run_tool`'s events for a tool that returns its output whole: START, then END."""
    reply_id = context.reply_id
    if announce:
        yield ToolResultStartEvent(reply_id=reply_id, block_id=call.id, name=call.name)
    yield tool_result_end(reply_id, call.id, await result_of(tool, call, context, args))


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
    known = None  # the engine's answer, when it is known without asking it
    if defers_to_tool(run.state.permission_context) and allows_every_call(tool):
        known = allowed_by_default()
    if known is not None and not (middlewares and has_hook(middlewares, "on_check_permission")):
        decision = known
    else:
        # Hooks that only watch are told the known answer; one that may change the call
        # gets the engine's answer to the call it passes on.
        if middlewares and has_rewriting_hook(middlewares, "on_check_permission"):
            known = None
        decision = await decide_with_hooks(middlewares, run.state, tool, args, record, known)
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
        yield tool_result_end(run.reply_id, call.id, answer)


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
