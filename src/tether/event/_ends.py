"""REPLY_END and TOOL_RESULT_END, built from values the loop validated already.

`reply()` builds these for every reply, whoever listens (only the watchers' events depend
on a middleware declaring `watches_all_events`). Validated, each costs ~19 k instructions
(three per reply of the benchmark workload: 57 k, over half of the 10 % issue 32 allows);
built by pydantic-core from a finished `__dict__` (`tether._fast.builder`, checked once
against the validated constructor, else validated), ~12 k. The caller vouches for the
types: `str` ids, a validated `Msg` / `ToolResultBlock`, kept as they are (as validation
keeps a model instance).
"""

from __future__ import annotations

from tether import _fast
from tether.event._events import EventType, ReplyEndEvent, ToolResultEndEvent
from tether.event._stamps import stamped
from tether.message import AssistantMsg, Msg, ToolResultBlock

__all__ = ["reply_end", "tool_result_end"]

_fast.prepare(ReplyEndEvent, ToolResultEndEvent)  # at import: before the classes are built
_builds: dict[type, _fast.Build | None] = {}


def _build(cls: type, sample: dict[str, object]) -> _fast.Build | None:
    if cls not in _builds:
        _builds[cls] = _fast.builder(cls, sample)
    return _builds[cls]


def reply_end(reply_id: str, msg: Msg) -> ReplyEndEvent:
    """`ReplyEndEvent(reply_id=reply_id, msg=msg)`."""
    build = _builds.get(ReplyEndEvent) or _build(
        ReplyEndEvent, {"reply_id": "r", "msg": AssistantMsg("a", "hi")}
    )
    if build is None:
        return ReplyEndEvent(reply_id=reply_id, msg=msg)
    fields = stamped(reply_id)
    fields["type"] = EventType.REPLY_END
    fields["msg"] = msg
    event: ReplyEndEvent = build((fields, None, {"reply_id", "msg"}))
    return event


def tool_result_end(reply_id: str, block_id: str, result: ToolResultBlock) -> ToolResultEndEvent:
    """`ToolResultEndEvent(reply_id=reply_id, block_id=block_id, tool_result=result)`."""
    build = _builds.get(ToolResultEndEvent) or _build(
        ToolResultEndEvent,
        {"reply_id": "r", "block_id": "c", "tool_result": ToolResultBlock(id="c", name="t")},
    )
    if build is None:
        return ToolResultEndEvent(reply_id=reply_id, block_id=block_id, tool_result=result)
    fields = stamped(reply_id)
    fields["block_id"] = block_id
    fields["type"] = EventType.TOOL_RESULT_END
    fields["tool_result"] = result
    event: ToolResultEndEvent = build((fields, None, {"reply_id", "block_id", "tool_result"}))
    return event
