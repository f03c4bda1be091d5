"""Following a session's event log: replay after a sequence number, then wait for more.

Replay and live follow are one loop over the log (read after the cursor, wait on the log
when caught up), so no event can slip between them, whichever worker wrote it.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator

from tether.app.storage import EventLogBase, LogEntry, LogKey

__all__ = ["follow", "sse_frames"]

_WAIT = 1.0  # seconds per wait on the log before looking at the lease again
_PING = 15.0  # seconds of silence before a keep-alive comment


async def follow(
    events: EventLogBase, key: LogKey, after: int, *, token: int | None = None
) -> AsyncIterator[list[LogEntry]]:
    """Yield the log's events after `after`, then live ones, until the run ends.

    With `token`, stop at the end marker of that run; without, stop once caught up with
    a run that ended (or when none runs). Events come in the batches the log was read in
    (so a stream sends them in one write); an empty batch while waiting (for keep-alives).
    """
    cursor, ended, look = after, False, True
    while True:
        entries = await events.read(key, cursor)
        batch: list[LogEntry] = []
        for entry in entries:
            cursor = entry.seq
            if entry.is_end:
                if token is not None and entry.data == str(token):
                    if batch:
                        yield batch
                    return
                ended = True
                continue
            ended = False
            batch.append(entry)
        if batch:
            yield batch
        if entries:
            continue
        # Look at the lease when first caught up, after every quiet wait (a worker that
        # died logs nothing more; a run this process holds is alive, no need to ask), and
        # after a run's end marker: a new run may hold the lease without having logged
        # yet (its start returns once its first event is queued, not committed). The
        # lease is released in the same step as the end marker is written: with no
        # lease, every entry of the run is in the log; read once more.
        if (look or (token is None and ended)) and not events.holds(key):
            if await events.active(key) is None:
                if not await events.read(key, cursor, 1):
                    return
                continue
        look = not await events.wait(key, cursor, _WAIT)
        yield []


async def sse_frames(batches: AsyncIterator[list[LogEntry]]) -> AsyncIterator[bytes]:
    """SSE frames: `id:` the sequence number, `event:` the type, `data:` the event JSON.

    The frames of one batch go out as one chunk (one write through the ASGI stack).
    """
    last = time.monotonic()
    async for batch in batches:
        now = time.monotonic()
        if not batch:
            if now - last >= _PING:
                last = now
                yield b": keep-alive\n\n"
            continue
        last = now
        yield "".join(f"id: {e.seq}\nevent: {e.type}\ndata: {e.data}\n\n" for e in batch).encode()
