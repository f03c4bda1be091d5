"""Cut a reply's tool calls into batches: runs of concurrency-safe calls, or one call alone."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tether.message import ToolCallBlock

__all__ = ["next_batch"]


def next_batch(
    calls: Sequence[ToolCallBlock], is_safe: Callable[[ToolCallBlock], bool]
) -> list[ToolCallBlock]:
    """The batch that starts at `calls[0]`.

    A call that is not concurrency-safe runs alone; otherwise the batch is the longest
    run of consecutive concurrency-safe calls. Results keep the call order either way.
    """
    if not calls:
        return []
    if not is_safe(calls[0]):
        return [calls[0]]
    batch = [calls[0]]
    for call in calls[1:]:
        if not is_safe(call):
            break
        batch.append(call)
    return batch
