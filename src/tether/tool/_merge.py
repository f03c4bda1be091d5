"""Run several async streams at once and yield their items as they arrive."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, TypeVar

__all__ = ["Emit", "merge_streams"]

T = TypeVar("T")
Emit = Callable[[Any], Awaitable[None]]
"""Puts an extra item into the merged stream (e.g. a tool's progress event)."""
_DONE = object()


async def merge_streams(
    makers: Sequence[Callable[[Emit], AsyncIterator[T]]],
) -> AsyncGenerator[T, None]:
    """Start every stream (each made with an `emit` callback) and yield items as they come.

    Each stream runs in its own task. An exception in a stream is raised once all streams
    have ended. Closing the merged stream (or cancelling its consumer) cancels the streams
    still running and waits for them; wrap it in `contextlib.aclosing` so that happens at
    once rather than when the generator is collected.
    """
    queue: asyncio.Queue[Any] = asyncio.Queue()

    async def pump(make: Callable[[Emit], AsyncIterator[T]]) -> None:
        try:
            async for item in make(queue.put):
                await queue.put(item)
        finally:
            await queue.put(_DONE)

    tasks = [asyncio.create_task(pump(make)) for make in makers]
    try:
        remaining = len(tasks)
        while remaining:
            item = await queue.get()
            if item is _DONE:
                remaining -= 1
                continue
            yield item
        for task in tasks:
            task.result()  # surface a stream's own exception
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
