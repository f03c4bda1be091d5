"""tether.tool.merge_streams: concurrent streams, emitted items, cancellation, errors."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

import pytest

from tether.tool import merge_streams


async def test_items_interleave_and_emitted_items_arrive_live() -> None:
    gate = asyncio.Event()

    def first(emit):
        async def gen():
            yield "a1"
            await emit("a-progress")
            await gate.wait()  # released only once the consumer has seen b1
            yield "a2"

        return gen()

    def second(emit):
        async def gen():
            yield "b1"

        return gen()

    seen = []
    async for item in merge_streams([first, second]):
        seen.append(item)
        if item == "b1":
            gate.set()
    assert seen.index("a-progress") < seen.index("a2")
    assert sorted(seen) == ["a-progress", "a1", "a2", "b1"]


async def test_closing_the_merged_stream_cancels_what_still_runs() -> None:
    cancelled = asyncio.Event()

    def forever(emit):
        async def gen():
            yield "start"
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                cancelled.set()
                raise
            yield "never"

        return gen()

    async with aclosing(merge_streams([forever])) as items:
        async for item in items:
            assert item == "start"
            break
    assert cancelled.is_set()


async def test_an_error_in_one_stream_is_raised_after_the_others_end() -> None:
    def broken(emit):
        async def gen():
            yield "x"
            raise ValueError("boom")

        return gen()

    def fine(emit):
        async def gen():
            yield "y"

        return gen()

    seen = []
    with pytest.raises(ValueError, match="boom"):
        async for item in merge_streams([broken, fine]):
            seen.append(item)
    assert sorted(seen) == ["x", "y"]
