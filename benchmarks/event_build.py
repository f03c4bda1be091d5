"""What building one event costs: validated `__init__` against `model_construct`.

Issue 20 asked for events built without re-validation where the loop already validated
the data. This measures whether skipping validation is cheaper with this pydantic.

    python benchmarks/event_build.py
"""

from __future__ import annotations

import timeit
from collections.abc import Callable

from tether._ids import new_id, now_iso
from tether.event import TextBlockDeltaEvent, ToolResultEndEvent
from tether.message import ToolResultBlock

RESULT = ToolResultBlock(id="c1", name="add", output="3")


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
