"""Output of a running process as text, handed out as it arrives."""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import AsyncIterator
from typing import Any

__all__ = ["LiveOutput"]


class LiveOutput:
    """Collects a process's output bytes and gives them back as text while it runs.

    Bytes are decoded incrementally (a character split between two reads is not
    mangled). At most `limit` characters are handed out, then one note says the rest is
    not shown live; the process's own capped output is what its result keeps.
    """

    def __init__(self, limit: int) -> None:
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._parts: list[str] = []
        self._left = limit
        self._ready = asyncio.Event()

    def feed(self, data: bytes) -> None:
        """Take bytes the process wrote (called by the reader, on the event loop)."""
        if self._left > 0:
            self._add(self._decoder.decode(data))

    def _add(self, text: str) -> None:
        if not text or self._left <= 0:
            return
        if len(text) >= self._left:
            text = text[: self._left] + "\n[... the rest is not shown live; see the result ...]\n"
        self._left -= len(text)
        self._parts.append(text)
        self._ready.set()

    async def until(self, task: asyncio.Future[Any]) -> AsyncIterator[str]:
        """Yield the text as it comes, until `task` (the process) is done."""
        task.add_done_callback(lambda _: self._ready.set())
        while True:
            await self._ready.wait()
            self._ready.clear()
            done = task.done()  # before taking the text: nothing is fed after it is done
            if self._parts:
                text, self._parts = "".join(self._parts), []
                yield text
            if done:
                if self._left > 0:
                    rest = self._decoder.decode(b"", final=True)
                    if rest:
                        yield rest[: self._left]
                return
