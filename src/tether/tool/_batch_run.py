"""Acting's batching: pick the next batch of a reply's open calls, run it, commit results."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from functools import partial
from typing import Any

from tether.event import AgentEvent, ToolResultEndEvent
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from tether.tool._arguments import ArgumentError, parse_arguments
from tether.tool._base import ToolBase
from tether.tool._batching import next_batch
from tether.tool._function import FunctionTool
from tether.tool._merge import Emit, merge_streams
from tether.tool._runner import error_result
from tether.tool._toolkit import ToolkitView

__all__ = [
    "Commit",
    "Start",
    "call_arguments",
    "interrupt_unfinished",
    "open_batch",
    "parse_call",
    "run_batch",
]

Start = Callable[
    [ToolCallBlock, ToolBase, dict[str, Any] | None, Emit | None], AsyncIterator[AgentEvent]
]
"""Starts one call's event stream (`run_tool` inside the caller's hooks)."""
Commit = Callable[[ToolCallBlock, ToolResultBlock], Awaitable[None]]
"""Puts one call's result into the reply."""


def parse_call(call: ToolCallBlock) -> dict[str, Any] | ArgumentError:
    """The call's arguments, or the error that says why they don't parse."""
    try:
        return parse_arguments(call.input)
    except ArgumentError as exc:
        return exc


def call_arguments(call: ToolCallBlock) -> dict[str, Any] | None:
    """The call's arguments, or None if they don't parse."""
    args = parse_call(call)
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
        parsed[call.id] = parse_call(call)
    args = parsed[call.id]
    if isinstance(args, ArgumentError):
        return True  # answered at once with an error result
    return tool.is_concurrency_safe_call(args)


def open_batch(
    view: ToolkitView, calls: Sequence[ToolCallBlock]
) -> list[tuple[ToolCallBlock, dict[str, Any] | ArgumentError]]:
    """The next batch of the calls still to check or run, each with its arguments.

    Arguments are parsed at most once per call.
    """
    open_calls = [c for c in calls if c.state in (ToolCallState.PENDING, ToolCallState.ALLOWED)]
    parsed: dict[str, dict[str, Any] | ArgumentError] = {}
    batch = next_batch(open_calls, lambda c: _is_safe(view, c, parsed))
    return [(c, parsed[c.id] if c.id in parsed else parse_call(c)) for c in batch]


async def interrupt_unfinished(
    calls: Sequence[ToolCallBlock],
    commit: Commit,
    text: str = "The call was interrupted before it finished.",
) -> list[ToolResultBlock]:
    """Commit an interrupted result for every call without one; return those results."""
    results = []
    for call in calls:
        if call.state is not ToolCallState.FINISHED:
            result = error_result(call, text, ToolResultState.INTERRUPTED)
            await commit(call, result)
            results.append(result)
    return results


def _cannot_emit(tool: ToolBase) -> bool:
    # A function tool without a ToolContext parameter has no way to emit events, so it
    # can run inline; anything else runs behind a queue so its events stream live.
    return isinstance(tool, FunctionTool) and not tool.takes_context


async def run_batch(
    calls: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]],
    start: Start,
    commit: Commit,
    settle: Commit | None = None,
) -> AsyncIterator[AgentEvent]:
    """Run the calls (concurrently when more than one); commit each result as it ends.

    A call left without a result (an error, a cancellation) is put in as interrupted
    with `settle` (default: `commit`).
    """
    settle = settle or commit
    if len(calls) == 1 and _cannot_emit(calls[0][1]):
        async for event in _run_alone(*calls[0], start, commit, settle):
            yield event
        return
    by_id = {call.id: call for call, _, _ in calls}
    makers = [partial(start, call, tool, args) for call, tool, args in calls]
    try:
        async with aclosing(merge_streams(makers)) as events:
            async for event in events:
                if isinstance(event, ToolResultEndEvent) and event.block_id in by_id:
                    await commit(by_id[event.block_id], event.tool_result)
                yield event
    finally:
        await interrupt_unfinished([call for call, _, _ in calls], settle)


async def _run_alone(
    call: ToolCallBlock,
    tool: ToolBase,
    args: dict[str, Any] | None,
    start: Start,
    commit: Commit,
    settle: Commit,
) -> AsyncIterator[AgentEvent]:
    """Run one call inline (no task, no queue): only for tools that cannot emit events."""
    try:
        async for event in start(call, tool, args, None):
            if isinstance(event, ToolResultEndEvent) and event.block_id == call.id:
                await commit(call, event.tool_result)
            yield event
    finally:
        await interrupt_unfinished([call], settle)
