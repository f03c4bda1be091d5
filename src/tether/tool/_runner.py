"""Run one tool call: arguments in, result events out. Never raises for the model's mistakes."""

from __future__ import annotations

import inspect
import logging
import traceback
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from types import CoroutineType
from typing import Any

from tether.event import (
    AgentEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
    ToolResultTextDeltaEvent,
)
from tether.message import (
    DataBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
)
from tether.tool._arguments import ArgumentError, parse_arguments, validate_arguments
from tether.tool._base import ToolBase, ToolContext, ToolOutput

__all__ = ["error_result", "result_of", "run_tool", "to_result"]

_log = logging.getLogger("tether.tool")


def _text_result(
    call: ToolCallBlock, text: str, state: ToolResultState | None = None
) -> ToolResultBlock:
    """`ToolResultBlock(id=call.id, name=call.name, output=text[, state=state])`."""
    if state is None:
        return ToolResultBlock(id=call.id, name=call.name, output=text)
    return ToolResultBlock(id=call.id, name=call.name, output=text, state=state)


def error_result(
    call: ToolCallBlock, text: str, state: ToolResultState = ToolResultState.ERROR
) -> ToolResultBlock:
    """An error result the model reads."""
    return _text_result(call, text, state)


def to_result(call: ToolCallBlock, output: ToolOutput | Any) -> ToolResultBlock:
    """Normalise whatever a tool returned into a `ToolResultBlock` for `call`."""
    if type(output) is str:
        return _text_result(call, output)
    if isinstance(output, ToolResultBlock):
        return output.model_copy(update={"id": call.id, "name": call.name})
    if isinstance(output, str):
        return ToolResultBlock(id=call.id, name=call.name, output=output)
    if type(output) is int:  # common, and its JSON is its str (json.dumps is slow here)
        return _text_result(call, str(output))
    if (
        isinstance(output, list)
        and output
        and all(isinstance(b, TextBlock | DataBlock) for b in output)
    ):
        return ToolResultBlock(id=call.id, name=call.name, output=list(output))
    if output is None:
        return ToolResultBlock(id=call.id, name=call.name, output="")
    if isinstance(output, TextBlock | DataBlock):
        return ToolResultBlock(id=call.id, name=call.name, output=[output])
    try:
        import json

        text = json.dumps(output, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(output)
    return ToolResultBlock(id=call.id, name=call.name, output=text)


def _describe_exception(tool: ToolBase, exc: BaseException) -> str:
    frame = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    where = f" (at {frame[0].name}:{frame[0].lineno})" if frame else ""
    return (
        f"Error: tool {tool.name!r} raised {type(exc).__name__}: {exc}{where}. "
        "Check the arguments, or try another approach."
    )


def _failed(tool: ToolBase, call: ToolCallBlock, exc: Exception) -> ToolResultBlock:
    """The error result for bad arguments or a tool's exception (which is logged)."""
    if isinstance(exc, ArgumentError):
        return error_result(call, f"Error: {exc}")
    _log.warning("tool %r raised (call %s)", tool.name, call.id, exc_info=exc)
    return error_result(call, _describe_exception(tool, exc))


async def result_of(
    tool: ToolBase, call: ToolCallBlock, context: ToolContext, arguments: dict[str, Any] | None
) -> ToolResultBlock:
    """Run `tool` for `call` and return its result: `run_tool` without the events.

    Meant for a tool whose call returns its output whole (a coroutine or a sync
    function); a streaming tool's chunks are joined, but no delta event is made. Bad
    arguments and exceptions become error results; only cancellation propagates.
    """
    try:
        if arguments is None:
            arguments = parse_arguments(call.input)
        outcome = tool.call(validate_arguments(tool.input_model, arguments), context)
        if type(outcome) is CoroutineType or inspect.isawaitable(outcome):
            return to_result(call, await outcome)
        kept: list[ToolResultBlock] = []
        async with aclosing(_chunks(call, outcome, context.reply_id, kept, emit=False)) as chunks:
            async for _event in chunks:
                pass
        return kept[0]
    except Exception as exc:  # a tool's failure is the model's to handle, and logged
        return _failed(tool, call, exc)


async def _chunks(
    call: ToolCallBlock,
    outcome: AsyncIterator[Any],
    reply_id: str,
    kept: list[ToolResultBlock],
    *,
    emit: bool,
) -> AsyncGenerator[AgentEvent, None]:
    """A streaming tool's text deltas (if `emit`); its result goes into `kept`."""
    parts: list[str] = []
    final: ToolResultBlock | None = None
    try:
        async for chunk in outcome:
            if isinstance(chunk, ToolResultBlock):
                final = to_result(call, chunk)
            else:
                parts.append(str(chunk))
                if emit:
                    yield ToolResultTextDeltaEvent(
                        reply_id=reply_id, block_id=call.id, delta=str(chunk)
                    )
    finally:
        # Closed at once when this run is closed or cancelled, so the tool stops
        # what it runs (a Bash command) now, not when the generator is collected.
        close = getattr(outcome, "aclose", None)
        if close is not None:
            await close()
    kept.append(final if final is not None else to_result(call, "".join(parts)))


async def run_tool(
    tool: ToolBase,
    call: ToolCallBlock,
    context: ToolContext,
    arguments: dict[str, Any] | None,
    *,
    announce: bool = True,
) -> AsyncIterator[AgentEvent]:
    """Run `tool` for `call`, yielding TOOL_RESULT_START, text deltas and TOOL_RESULT_END.

    The END event carries the whole result. Bad arguments and exceptions become error
    results; only cancellation propagates. `announce=False` skips the START event (for
    callers that only want the result).
    """
    reply_id = context.reply_id
    if announce:
        yield ToolResultStartEvent(reply_id=reply_id, block_id=call.id, name=call.name)
    try:
        if arguments is None:
            arguments = parse_arguments(call.input)
        tool_input = validate_arguments(tool.input_model, arguments)
        outcome = tool.call(tool_input, context)
        if type(outcome) is CoroutineType or inspect.isawaitable(outcome):
            result = to_result(call, await outcome)
        else:
            kept: list[ToolResultBlock] = []
            # closed with this run: the tool's own stream stops now (see `_chunks`)
            async with aclosing(_chunks(call, outcome, reply_id, kept, emit=True)) as chunks:
                async for event in chunks:
                    yield event
            result = kept[0]
    except Exception as exc:  # a tool's failure is the model's to handle, and logged
        result = _failed(tool, call, exc)
    yield ToolResultEndEvent(reply_id=reply_id, block_id=call.id, tool_result=result)
