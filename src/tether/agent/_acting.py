"""The acting step: check the next batch of tool calls, run the allowed ones, commit results."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from functools import partial
from typing import Any

from tether.agent._run import STRUCTURED_TOOL, Run
from tether.context import fit_tool_result
from tether.event import AgentEvent, ToolResultEndEvent, ToolResultStartEvent
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from tether.middleware import ActingCall, PermissionCall, chain_awaitable, chain_iterator
from tether.permission import PermissionBehavior, PermissionDecision, PermissionEngine
from tether.tool import (
    ArgumentError,
    FunctionTool,
    ToolBase,
    ToolContext,
    ToolkitView,
    error_result,
    merge_streams,
    next_batch,
    parse_arguments,
    run_tool,
)

__all__ = ["act", "commit_result", "interrupt_unfinished"]


def _parse(call: ToolCallBlock) -> dict[str, Any] | ArgumentError:
    try:
        return parse_arguments(call.input)
    except ArgumentError as exc:
        return exc


def _arguments(call: ToolCallBlock) -> dict[str, Any] | None:
    args = _parse(call)
    return None if isinstance(args, ArgumentError) else args


def _is_safe(
    view: ToolkitView, call: ToolCallBlock, parsed: dict[str, dict[str, Any] | ArgumentError]
) -> bool:
    tool = view.tools.get(call.name)
    if tool is None:
        return True  # answered at once with an error result
    if type(tool).is_concurrency_safe_call is ToolBase.is_concurrency_safe_call:
        return tool.is_concurrency_safe  # no need to parse the arguments
    if call.id not in parsed:
        parsed[call.id] = _parse(call)
    args = parsed[call.id]
    if isinstance(args, ArgumentError):
        return True  # answered at once with an error result
    return tool.is_concurrency_safe_call(args)


async def commit_result(run: Run, call: ToolCallBlock, result: ToolResultBlock) -> None:
    """Put a call's result into the reply (the context copy, cut if too long)."""
    agent, state = run.agent, run.state
    kept = await fit_tool_result(result, agent.context_config, agent.offloader, state)
    msg = state.reply_msg()
    assert msg is not None
    msg.put_tool_result(kept)
    call.state = ToolCallState.FINISHED
    state.note_blocks([kept])
    if call.name == STRUCTURED_TOOL and result.state is ToolResultState.SUCCESS:
        args = _arguments(call) or {}
        model = run.structured_model
        msg.metadata["structured_output"] = (
            model.model_validate(args).model_dump(mode="json") if model is not None else args
        )
        run.cursor.finished = True


async def _decide(run: Run, tool: ToolBase, call: ToolCallBlock, args: dict[str, Any]) -> Any:
    async def handler(c: PermissionCall) -> PermissionDecision:
        engine = PermissionEngine(c.state.permission_context)
        return await engine.decide(c.tool, c.tool_input, c.state.tool_state_for(c.tool.name))

    pcall = PermissionCall(
        agent=run.agent,
        state=run.state,
        reply_id=run.reply_id,
        tool_call=call,
        tool=tool,
        tool_input=args,
    )
    return await chain_awaitable(run.agent.middlewares, "on_check_permission", pcall, handler)


async def _check(
    run: Run, view: ToolkitView, call: ToolCallBlock, args: dict[str, Any] | ArgumentError
) -> ToolResultBlock | None:
    """Decide a pending call: set its state, or return the result that answers it now."""
    tool = view.tools.get(call.name)
    if tool is None:
        return error_result(call, view.unknown_tool_message(call.name, run.state))
    if isinstance(args, ArgumentError):
        return error_result(call, f"Error: {args}")
    decision: PermissionDecision = await _decide(run, tool, call, args)
    if decision.behavior is PermissionBehavior.DENY:
        return error_result(
            call,
            f"Permission denied: {decision.reason}. Do not retry this call as is.",
            ToolResultState.DENIED,
        )
    if decision.behavior is PermissionBehavior.ASK:
        call.state = ToolCallState.ASKING
        call.suggested_rules = list(decision.suggested_rules)
        return None
    call.state = ToolCallState.SUBMITTED if tool.is_external_tool else ToolCallState.ALLOWED
    return None


async def act(run: Run) -> AsyncIterator[AgentEvent]:
    """Check the next batch; answer refused calls at once; run the allowed ones."""
    state, reply_id = run.state, run.reply_id
    msg = state.reply_msg()
    assert msg is not None
    view = await run.agent.toolkit_view(state, run.structured_model, with_prompt=False)
    open_calls = [
        c for c in msg.tool_calls if c.state in (ToolCallState.PENDING, ToolCallState.ALLOWED)
    ]
    parsed: dict[str, dict[str, Any] | ArgumentError] = {}  # each call parsed once per step
    batch = next_batch(open_calls, lambda c: _is_safe(view, c, parsed))
    to_run: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]] = []
    for call in batch:
        args = parsed[call.id] if call.id in parsed else _parse(call)
        if call.state is ToolCallState.PENDING:
            answer = await _check(run, view, call, args)
            if answer is not None:
                await commit_result(run, call, answer)
                if run.observed:
                    yield ToolResultStartEvent(reply_id=reply_id, block_id=call.id, name=call.name)
                yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=answer)
                continue
        tool = view.tools.get(call.name)
        if call.state is ToolCallState.ALLOWED and tool is not None and tool.is_external_tool:
            call.state = ToolCallState.SUBMITTED
        elif call.state is ToolCallState.ALLOWED:
            if tool is None:  # e.g. its plugin fell asleep between pause and resume
                answer = error_result(call, view.unknown_tool_message(call.name, state))
                await commit_result(run, call, answer)
                yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=answer)
                continue
            to_run.append((call, tool, None if isinstance(args, ArgumentError) else args))
    if to_run:
        async for event in _execute(run, to_run):
            yield event


def _events(
    run: Run,
    call: ToolCallBlock,
    tool: ToolBase,
    args: dict[str, Any] | None,
    emit: Any,
) -> AsyncIterator[AgentEvent]:
    context = ToolContext(
        tool_call_id=call.id,
        reply_id=run.reply_id,
        permission_context=run.state.permission_context,
        tool_state=run.tool_state(tool.name),
        session_state=run.state,
        emit=emit,
    )
    acting = ActingCall(
        agent=run.agent, state=run.state, reply_id=run.reply_id, tool_call=call, tool=tool
    )
    return chain_iterator(
        run.agent.middlewares,
        "on_acting",
        acting,
        # a middleware that rewrote the call's input gets it parsed afresh
        lambda c: run_tool(
            c.tool,
            c.tool_call,
            context,
            args if c.tool_call is call else _arguments(c.tool_call),
            announce=run.observed,
        ),
    )


def _cannot_emit(tool: ToolBase) -> bool:
    # A function tool without a ToolContext parameter has no way to emit events, so it
    # can run inline; anything else runs behind a queue so its events stream live.
    return isinstance(tool, FunctionTool) and not tool.takes_context


async def _run_alone(
    run: Run, call: ToolCallBlock, tool: ToolBase, args: dict[str, Any] | None
) -> AsyncIterator[AgentEvent]:
    """Run one call inline (no task, no queue): only for tools that cannot emit events."""
    try:
        async for event in _events(run, call, tool, args, None):
            if isinstance(event, ToolResultEndEvent) and event.block_id == call.id:
                await commit_result(run, call, event.tool_result)
            yield event
    finally:
        await interrupt_unfinished(run, [call])


async def interrupt_unfinished(
    run: Run,
    calls: list[ToolCallBlock],
    text: str = "The call was interrupted before it finished.",
) -> list[ToolResultBlock]:
    """End every call of `calls` that has no result yet as interrupted; return those results."""
    results = []
    for call in calls:
        if call.state is not ToolCallState.FINISHED:
            result = error_result(call, text, ToolResultState.INTERRUPTED)
            await commit_result(run, call, result)
            results.append(result)
    return results


async def _execute(
    run: Run, calls: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]]
) -> AsyncIterator[AgentEvent]:
    """Run the calls (concurrently when more than one); commit each result as it ends."""
    if len(calls) == 1 and _cannot_emit(calls[0][1]):
        async for event in _run_alone(run, *calls[0]):
            yield event
        return
    by_id = {call.id: call for call, _, _ in calls}
    makers = [partial(_events, run, call, tool, args) for call, tool, args in calls]
    try:
        async with aclosing(merge_streams(makers)) as events:
            async for event in events:
                if isinstance(event, ToolResultEndEvent) and event.block_id in by_id:
                    await commit_result(run, by_id[event.block_id], event.tool_result)
                yield event
    finally:
        await interrupt_unfinished(run, [call for call, _, _ in calls])
