"""Delta events built from values that are already right, without validating them again.

A streamed answer makes one event per delta, thousands in a reply. Their values are known
to be right before the event exists: the reply id comes from the loop, the block id from
the assembler, the delta is the provider's `str`. Validating each event again is most of
its price, and the id and timestamp every event gets are most of the rest, so
`delta_maker` builds one block's delta events without either cost:

- the instance is made by pydantic-core from a finished `__dict__` (`tether._fast.builder`,
  the one place that relies on how pydantic builds models), which is what
  `model_construct` does, but without its per-call work in Python;
- the id is one of `tether._ids.new_id`'s (the process's prefix and the next number of
  its counter, as 8 hex digits), its text put together from a table of hex digits instead
  of formatting;
- the timestamp is read from the clock for every event, but its text is made once per
  millisecond of a block: delta events of one block made within 1 ms of its first share
  that one's `created_at` (at most 1 ms early; a new block, or a clock that went back,
  always reads afresh).

Apart from that timestamp the result is exactly what the validated constructor gives: the
same class, the same `__dict__` in the same order (so the same JSON), the same fields-set,
no extra, no private values. The first maker of each class checks that against a validated
event (`builder`), and falls back to validating if pydantic ever builds them differently.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, TypeVar

from tether import _fast
from tether._ids import ID_PREFIX, next_id_number, now_iso
from tether.event._events import (
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolResultTextDeltaEvent,
)

__all__ = ["delta_maker"]

D = TypeVar(
    "D",
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    ToolResultTextDeltaEvent,
)

_GIVEN = ("reply_id", "block_id", "delta")
"""The fields a delta event's constructor is given (its fields-set)."""

_next = next_id_number  # one id sequence with `new_id`
_HEX2 = tuple(f"{i:02x}" for i in range(256))
_high: tuple[int, str] = (-1, "")
"""The id's counter above its last two hex digits, and its text (one tuple: atomic)."""

_time_ns = time.time_ns
_SHARED_NS = 1_000_000
"""Delta events of one block made within this many nanoseconds share their timestamp."""

_builders: dict[type[Any], tuple[_fast.Build, Any] | None] = {}
"""Per event class, pydantic-core's build from a finished `__dict__` once checked, and the
class's `type` (`None`: validate)."""
_fast.prepare(*D.__constraints__)  # at import: before anything builds the classes


def _high_part(n: int) -> tuple[int, str]:
    """The id's counter above its last two hex digits, and the id's text up to them."""
    return (n >> 8, f"{ID_PREFIX}{n >> 8:06x}")


def _builder(cls: type[D]) -> tuple[_fast.Build, Any] | None:
    """pydantic-core's build of `cls` and its `type`; `None` if it is not what validation makes."""
    if cls in _builders:
        return _builders[cls]
    build = _fast.builder(cls, {"reply_id": "r", "block_id": "b", "delta": "d"})
    kind = cls.model_fields["type"].default
    _builders[cls] = found = None if build is None else (build, kind)
    return found


def delta_maker(cls: type[D], reply_id: str, block_id: str) -> Callable[[str], D]:
    """A function that makes the delta events of one block: `make(delta)`.

    `delta_maker(TextBlockDeltaEvent, reply_id, block_id)(text)` equals
    `TextBlockDeltaEvent(reply_id=reply_id, block_id=block_id, delta=text)` (a fresh id
    each; the timestamp is shared within a millisecond), built without validation: the
    caller vouches that `reply_id`, `block_id` and every `delta` are `str`. The stream
    assembler makes one per block; a tool's output deltas can use one per call.
    """
    found = _builders[cls] if cls in _builders else _builder(cls)
    if found is None:  # pydantic builds these differently now: validate each
        return lambda delta: cls(reply_id=reply_id, block_id=block_id, delta=delta)
    build, kind = found
    template = {"reply_id": reply_id, "id": "", "created_at": "", "block_id": block_id}
    template["type"], template["delta"] = kind, ""  # the order of the fields
    copy = template.copy  # copying beats a dict display
    since = until = 0  # the span (ns) in which `stamp` is this block's time
    stamp = ""

    def make(delta: str) -> D:
        global _high
        nonlocal since, until, stamp
        fields = copy()
        n = _next()
        high = _high
        if high[0] != n >> 8:
            high = _high = _high_part(n)
        fields["id"] = high[1] + _HEX2[n & 255]
        ns = _time_ns()
        if not since <= ns < until:
            since, until, stamp = ns, ns + _SHARED_NS, now_iso()
        fields["created_at"] = stamp
        fields["delta"] = delta
        event: D = build((fields, None, {"reply_id", "block_id", "delta"}))
        return event

    return make
