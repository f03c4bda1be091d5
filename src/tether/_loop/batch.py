"""Acting's batches: pick the next batch of a reply's open calls, run it, hand back results.

Results come back as values (`Finished`): the tool's own result when it ran, so a
middleware that drops or rewrites the result event cannot change what is committed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import aclosing
from dataclasses import dataclass
from functools import partial
from typing import Any

from tether.event import AgentEvent, ToolResultEndEvent
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from tether.middleware._chain import close_stream
from tether.tool import (
    ArgumentError,
    Emit,
    FunctionTool,
    ToolBase,
    ToolkitView,
    error_result,
    merge_streams,
    parse_arguments,
)
from tether.tool._batching import next_batch

__all__ = [
    "Commit",
    "Finished",
    "Outcome",
    "Start",
    "call_arguments",
    "cannot_emit",
    "interrupt_unfinished",
    "open_batch",
    "parse_call",
    "returns_whole",
    "run_batch",
]


@dataclass(slots=True)
class Outcome:
    """Filled by the innermost run of a tool with the result the tool itself produced."""

    result: ToolResultBlock | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """A call's result, for the loop to commit (yielded before the call's result event)."""

    call: ToolCallBlock
    result: ToolResultBlock


Start = Callable[
    [ToolCallBlock, ToolBase, dict[str, Any] | None, Emit | None, Outcome],
    AsyncIterator[AgentEvent],
]
"""Starts one call's event stream (`run_tool` inside the caller's hooks; it fills the
`Outcome` when the tool ran)."""
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
    results: list[ToolResultBlock] = []
    for call in calls:
        if call.state is not ToolCallState.FINISHED:
            result = error_result(call, text, ToolResultState.INTERRUPTED)
            await commit(call, result)
            results.append(result)
    return results


def cannot_emit(tool: ToolBase) -> bool:
    # A function tool without a ToolContext parameter has no way to emit events, so it
    # can run inline; anything else runs behind a queue so its events stream live.
    return isinstance(tool, FunctionTool) and not tool.takes_context


def returns_whole(tool: ToolBase) -> bool:
    """A function tool that cannot emit and does not stream: only its result comes out."""
    return (
        type(tool).call is FunctionTool.call
        and isinstance(tool, FunctionTool)
        and not tool.takes_context
        and not tool.streams
    )


def run_batch(
    calls: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]], start: Start
) -> AsyncIterator[AgentEvent | Finished]:
    """Run the calls (concurrently when more than one): their events, and each `Finished`.

    A call without a `Finished` (an error, a cancellation) is the caller's to settle.
    """
    if len(calls) == 1 and cannot_emit(calls[0][1]):  # inline: no task, no queue
        return _one(*calls[0], start, None)
    return _merged(calls, start)


async def _merged(
    calls: list[tuple[ToolCallBlock, ToolBase, dict[str, Any] | None]], start: Start
) -> AsyncIterator[AgentEvent | Finished]:
    makers = [partial(_one, call, tool, args, start) for call, tool, args in calls]
    async with aclosing(merge_streams(makers)) as items:
        async for item in items:
            yield item


async def _one(
    call: ToolCallBlock,
    tool: ToolBase,
    args: dict[str, Any] | None,
    start: Start,
    emit: Emit | None,
) -> AsyncIterator[AgentEvent | Finished]:
    """One call's events, with its `Finished` just before its result event passes.

    The result is the tool's own (`Outcome`); a hook that answered in the tool's place
    (the tool never ran) is taken at its word.
    """
    outcome, done = Outcome(), False
    events = start(call, tool, args, emit, outcome)
    try:
        async for event in events:
            if not done and isinstance(event, ToolResultEndEvent) and event.block_id == call.id:
                done = True
                yield Finished(call, outcome.result or event.tool_result)
            yield event
    except BaseException:  # stopped: the tool's stream closes now, not when collected
        await close_stream(events)
        raise
    if not done and outcome.result is not None:  # a hook dropped the result event
        yield Finished(call, outcome.result)
