"""What building one event costs: validated `__init__` against `model_construct`.

Issue 20 asked for events built without re-validation where the loop already validated
the data. This measures whether skipping validation is cheaper with this pydantic: it is
not. pydantic's `model_construct` works out each default factory's signature per call,
and even an event built by hand in Python (`object.__new__`, `__dict__` set, the four
pydantic slots filled) costs about what pydantic-core's validation costs, because about
half of an event's price is its id and timestamp, which every way of building it pays.
`tether.event.delta_maker` (issue 20, second wave) pays neither in full: pydantic-core
builds the instance from a finished `__dict__`, the id comes from a digit table, and a
block's timestamp text is made once per millisecond.

    python benchmarks/event_build.py
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from tether._ids import new_id, now_iso
from tether.event import TextBlockDeltaEvent, ToolResultEndEvent, delta_maker
from tether.message import ToolResultBlock

RESULT = ToolResultBlock(id="c1", name="add", output="3")
MAKE = delta_maker(TextBlockDeltaEvent, "r", "b")
_new = object.__new__
_set = object.__setattr__


def by_hand(reply_id: str, block_id: str, delta: str) -> TextBlockDeltaEvent:
    """A TEXT_BLOCK_DELTA built without pydantic: what a 'slotted' construction costs."""
    event = _new(TextBlockDeltaEvent)
    fields = {
        "reply_id": reply_id,
        "id": new_id(),
        "created_at": now_iso(),
        "block_id": block_id,
        "type": TextBlockDeltaEvent.model_fields["type"].default,
        "delta": delta,
    }
    _set(event, "__dict__", fields)
    _set(event, "__pydantic_fields_set__", {"reply_id", "block_id", "delta"})
    _set(event, "__pydantic_extra__", None)
    _set(event, "__pydantic_private__", None)
    return event


def per_call_us(build: Callable[[], object], n: int = 20_000) -> float:
    build()
    return min(timeit.repeat(build, number=n, repeat=5)) / n * 1e6


def main() -> None:
    delta = TextBlockDeltaEvent
    end = ToolResultEndEvent
    rows = [
        (
            "TextBlockDeltaEvent(...) (validated)",
            lambda: delta(reply_id="r", block_id="b", delta="x"),
        ),
        (
            "TextBlockDeltaEvent.model_construct(...)",
            lambda: delta.model_construct(reply_id="r", block_id="b", delta="x"),
        ),
        (
            "  model_construct with id and created_at given",
            lambda: delta.model_construct(
                reply_id="r", block_id="b", delta="x", id=new_id(), created_at=now_iso()
            ),
        ),
        (
            "  validated with id and created_at given (constants)",
            lambda: delta(reply_id="r", block_id="b", delta="x", id="i", created_at="t"),
        ),
        ("  built by hand in Python (no pydantic call)", lambda: by_hand("r", "b", "x")),
        (
            "delta_maker(TextBlockDeltaEvent, ...)(...) (what the assembler uses)",
            lambda: MAKE("x"),
        ),
        (
            "ToolResultEndEvent(...) (validated, block kept as is)",
            lambda: end(reply_id="r", block_id="c1", tool_result=RESULT),
        ),
        (
            "ToolResultEndEvent.model_construct(...)",
            lambda: end.model_construct(reply_id="r", block_id="c1", tool_result=RESULT),
        ),
        ("new_id() + now_iso()", lambda: (new_id(), now_iso())),
    ]
    width = max(len(name) for name, _ in rows)
    for name, build in rows:
        print(f"{name:<{width}}  {per_call_us(build):6.2f} µs")


if __name__ == "__main__":
    main()
