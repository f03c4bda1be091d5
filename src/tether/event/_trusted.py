"""Events the loop and the stream assembler build from values that are already right.

Public as `tether.event.trusted_events` (`trusted_events.reply_start(reply_id, name)`).

An event's constructor validates what it is given, and the loop's and the assembler's
events are many (19 in a reply with two tool calls) while their values were validated
before: ids and names come from validated blocks, the nested blocks and messages are
validated instances (which validation keeps as they are), the reply id from the loop.
These functions make the same events without validating again: pydantic-core builds the
instance from a finished `__dict__` (a model schema whose inner schema takes the values as
they are: the `model_construct` contract, in Rust), with the id and timestamp of
`tether.event._stamps.stamped`.

The result is what the validated constructor called with the same arguments gives: the
same class, the same `__dict__` in the same order (so the same JSON), the same fields-set,
no extra, no private values. The first event of each class is compared with a validated
one, field by field; on any difference that class is validated from then on. The caller
vouches for the types (`str` ids and names, the declared models).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from pydantic_core import SchemaValidator, core_schema

from tether.event._events import (
    EventType,
    ModelCallEndEvent,
    ModelCallStartEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
)
from tether.event._stamps import stamped
from tether.message import ChatUsage, Msg, ToolCallBlock, ToolResultBlock

__all__ = [
    "model_call_end",
    "model_call_start",
    "reply_end",
    "reply_start",
    "text_block_end",
    "text_block_start",
    "thinking_block_end",
    "thinking_block_start",
    "tool_call_end",
    "tool_call_start",
    "tool_result_end",
    "tool_result_start",
]

Build = Callable[[tuple[dict[str, Any], None, set[str]]], Any]

_CLASSES = (
    ModelCallEndEvent,
    ModelCallStartEvent,
    ReplyEndEvent,
    ReplyStartEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultEndEvent,
    ToolResultStartEvent,
)
_unchecked: dict[type[Any], Build] = {
    cls: SchemaValidator(core_schema.model_schema(cls, core_schema.any_schema())).validate_python
    for cls in _CLASSES
}
"""Per class, pydantic-core's build from `(__dict__, extra, fields_set)`. Made at import: the
event classes are built lazily (`defer_build`), and once a class is built pydantic-core
reuses the class's own (validating) validator for any schema naming it."""


def _validated(cls: type[Any]) -> Build:
    """The validated constructor, called with the given fields (its own id and time)."""

    def build(args: tuple[dict[str, Any], None, set[str]]) -> Any:
        fields, _, given = args
        return cls(**{name: fields[name] for name in given})

    return build


def exact(made: Any, expected: Any) -> bool:
    """Whether `made` is what validation made of the same values (`expected`)."""
    return (
        type(made) is type(expected)
        and list(made.__dict__.items()) == list(expected.__dict__.items())
        and made.model_dump_json() == expected.model_dump_json()
        and made.__pydantic_extra__ is None
        and made.__pydantic_private__ is None
    )


def _first(cls: type[Any]) -> Build:
    """Build the first event of `cls` both ways; keep the fast way only if they agree."""

    def build(args: tuple[dict[str, Any], None, set[str]]) -> Any:
        fields, _, given = args
        made = _unchecked[cls]((dict(fields), None, set(given)))
        expected = cls(**{name: fields[name] for name in (*given, "id", "created_at")})
        if exact(made, expected) and made.model_fields_set == given:
            _build[cls] = _unchecked[cls]
            return made
        _build[cls] = fallback = _validated(cls)
        return fallback(args)

    return build


_build: dict[type[Any], Build] = {cls: _first(cls) for cls in _CLASSES}
"""Per class, how its events are built (fast once checked, else validated)."""


def reply_start(reply_id: str, name: str) -> ReplyStartEvent:
    """`ReplyStartEvent(reply_id=reply_id, name=name)`."""
    fields = stamped(reply_id)
    fields["type"] = EventType.REPLY_START
    fields["name"] = name
    event: ReplyStartEvent = _build[ReplyStartEvent]((fields, None, {"reply_id", "name"}))
    return event


def reply_end(reply_id: str, msg: Msg) -> ReplyEndEvent:
    """`ReplyEndEvent(reply_id=reply_id, msg=msg)` (`msg` itself, as validation keeps it)."""
    fields = stamped(reply_id)
    fields["type"] = EventType.REPLY_END
    fields["msg"] = msg
    event: ReplyEndEvent = _build[ReplyEndEvent]((fields, None, {"reply_id", "msg"}))
    return event


def model_call_start(reply_id: str, model_name: str) -> ModelCallStartEvent:
    """`ModelCallStartEvent(reply_id=reply_id, model_name=model_name)`."""
    fields = stamped(reply_id)
    fields["type"] = EventType.MODEL_CALL_START
    fields["model_name"] = model_name
    event: ModelCallStartEvent = _build[ModelCallStartEvent](
        (fields, None, {"reply_id", "model_name"})
    )
    return event


def model_call_end(
    reply_id: str,
    model_name: str,
    usage: ChatUsage | None,
    stop_reason: str | None,
    cost: float | None,
) -> ModelCallEndEvent:
    """`ModelCallEndEvent(reply_id=, model_name=, usage=, stop_reason=, cost=)`, all given.

    A `cost` that is not a `float` (an `int` a provider reported) is validated, as is a
    `stop_reason` that is not exactly a `str`.
    """
    if not (cost is None or type(cost) is float) or not (
        stop_reason is None or type(stop_reason) is str
    ):
        return ModelCallEndEvent(
            reply_id=reply_id,
            model_name=model_name,
            usage=usage,
            stop_reason=stop_reason,
            cost=cost,
        )
    fields = stamped(reply_id)
    fields["type"] = EventType.MODEL_CALL_END
    fields["model_name"] = model_name
    fields["usage"] = usage
    fields["stop_reason"] = stop_reason
    fields["cost"] = cost
    event: ModelCallEndEvent = _build[ModelCallEndEvent](
        (fields, None, {"reply_id", "model_name", "usage", "stop_reason", "cost"})
    )
    return event


def text_block_start(reply_id: str, block_id: str) -> TextBlockStartEvent:
    """`TextBlockStartEvent(reply_id=reply_id, block_id=block_id)`."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TEXT_BLOCK_START
    event: TextBlockStartEvent = _build[TextBlockStartEvent](
        (fields, None, {"reply_id", "block_id"})
    )
    return event


def text_block_end(reply_id: str, block_id: str) -> TextBlockEndEvent:
    """`TextBlockEndEvent(reply_id=reply_id, block_id=block_id)`."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TEXT_BLOCK_END
    event: TextBlockEndEvent = _build[TextBlockEndEvent]((fields, None, {"reply_id", "block_id"}))
    return event


def thinking_block_start(reply_id: str, block_id: str) -> ThinkingBlockStartEvent:
    """`ThinkingBlockStartEvent(reply_id=reply_id, block_id=block_id)`."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.THINKING_BLOCK_START
    event: ThinkingBlockStartEvent = _build[ThinkingBlockStartEvent](
        (fields, None, {"reply_id", "block_id"})
    )
    return event


def thinking_block_end(
    reply_id: str, block_id: str, signature: str | None, redacted: bool
) -> ThinkingBlockEndEvent:
    """`ThinkingBlockEndEvent(reply_id=, block_id=, signature=, redacted=)`, all given."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.THINKING_BLOCK_END
    fields["signature"] = signature
    fields["redacted"] = redacted
    event: ThinkingBlockEndEvent = _build[ThinkingBlockEndEvent](
        (fields, None, {"reply_id", "block_id", "signature", "redacted"})
    )
    return event


def tool_call_start(reply_id: str, block_id: str, name: str) -> ToolCallStartEvent:
    """`ToolCallStartEvent(reply_id=reply_id, block_id=block_id, name=name)`."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TOOL_CALL_START
    fields["name"] = name
    event: ToolCallStartEvent = _build[ToolCallStartEvent](
        (fields, None, {"reply_id", "block_id", "name"})
    )
    return event


def tool_call_end(reply_id: str, block_id: str, tool_call: ToolCallBlock) -> ToolCallEndEvent:
    """`ToolCallEndEvent(reply_id=, block_id=, tool_call=)` (`tool_call` itself)."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TOOL_CALL_END
    fields["tool_call"] = tool_call
    event: ToolCallEndEvent = _build[ToolCallEndEvent](
        (fields, None, {"reply_id", "block_id", "tool_call"})
    )
    return event


def tool_result_start(reply_id: str, block_id: str, name: str) -> ToolResultStartEvent:
    """`ToolResultStartEvent(reply_id=reply_id, block_id=block_id, name=name)`."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TOOL_RESULT_START
    fields["name"] = name
    event: ToolResultStartEvent = _build[ToolResultStartEvent](
        (fields, None, {"reply_id", "block_id", "name"})
    )
    return event


def tool_result_end(
    reply_id: str, block_id: str, tool_result: ToolResultBlock
) -> ToolResultEndEvent:
    """`ToolResultEndEvent(reply_id=, block_id=, tool_result=)` (`tool_result` itself)."""
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TOOL_RESULT_END
    fields["tool_result"] = tool_result
    event: ToolResultEndEvent = _build[ToolResultEndEvent](
        (fields, None, {"reply_id", "block_id", "tool_result"})
    )
    return event
