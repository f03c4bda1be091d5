"""A stdio server's stderr: read from a pipe, logged within a budget, its tail kept.

Left to itself the SDK hands the server our own stderr, so a chatty or crashing server
writes without bound into the terminal (or a UI drawn on it). Here every line goes to
the logger `tether.mcp.stderr` (INFO) until the session's budget is spent; the last
lines are kept so a server that fails to start can say why in the error message.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import sys
from collections import deque
from typing import IO, TextIO

__all__ = ["LogBudget", "StderrSink"]

logger = logging.getLogger("tether.mcp.stderr")

LOG_LINES = 200
"""Lines of one session's stderr that are logged; later ones are only kept in the tail."""
LOG_BYTES = 64 * 1024
"""Bytes of one session's stderr that are logged."""
LINE_CHARS = 1000
"""A longer line is cut (in logs and in the tail)."""
TAIL_LINES = 10
"""Last lines kept for error messages."""
_CHUNK = 64 * 1024
_DRAIN_TIMEOUT = 1.0


class LogBudget:
    """Logs the lines of one stream of a server until its budget is spent, then one notice.

    Shared by stderr and by stdout noise (lines on stdout that are not MCP messages).
    """

    def __init__(self, server: str, stream: str, log: logging.Logger) -> None:
        self.server = server
        self.stream = stream
        self.lines = 0
        """Lines offered in all."""
        self._log = log
        self._logged_bytes = 0
        self._muted = False

    def cut(self, text: str) -> str:
        """`text` without a line end, cut to `LINE_CHARS` characters."""
        text = text.rstrip("\r\n")
        if len(text) > LINE_CHARS:
            return text[:LINE_CHARS] + f"... [{len(text) - LINE_CHARS} more characters]"
        return text

    def log(self, text: str) -> None:
        """Log one (already cut) line at INFO, if the budget allows."""
        self.lines += 1
        if self._muted:
            return
        if self.lines > LOG_LINES or self._logged_bytes + len(text) > LOG_BYTES:
            self._muted = True
            self._log.info(
                "[%s] more %s output than %d lines or %d bytes; the rest is not logged",
                self.server,
                self.stream,
                LOG_LINES,
                LOG_BYTES,
            )
            return
        self._logged_bytes += len(text)
        self._log.info("[%s] %s", self.server, text)


class StderrSink:
    """Owns the pipe a server writes its stderr to, and the task that reads it."""

    def __init__(self, server: str) -> None:
        self.server = server
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._budget = LogBudget(server, "stderr", logger)
        self._partial = b""
        self._transport: asyncio.BaseTransport | None = None
        self._task: asyncio.Task[None] | None = None
        self._reader: IO[bytes] | None = None
        self._writer: TextIO | None = None
        if sys.platform != "win32":  # no asyncio pipes for plain fds on Windows
            read_fd, write_fd = os.pipe()
            self._reader = os.fdopen(read_fd, "rb", buffering=0)
            self._writer = os.fdopen(write_fd, "w")

    @property
    def errlog(self) -> TextIO:
        """What to hand the SDK's `stdio_client` as the server's stderr."""
        return self._writer if self._writer is not None else sys.stderr

    async def start(self) -> None:
        """Start reading (before the server process is spawned)."""
        if self._reader is None:
            return
        loop = asyncio.get_running_loop()
        stream = asyncio.StreamReader(limit=_CHUNK)
        reader = self._reader
        self._transport, _ = await loop.connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(stream), reader
        )
        self._task = asyncio.create_task(self._pump(stream), name=f"mcp-stderr-{self.server}")

    def spawned(self) -> None:
        """The server has its copy of the pipe; drop ours so its exit ends the stream."""
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    async def finish(self) -> None:
        """Read what the exited server left in the pipe (briefly), then stop."""
        self.spawned()
        task = self._task
        try:
            if task is not None:
                # A server's child that inherited stderr may hold the pipe open: don't wait.
                with contextlib.suppress(TimeoutError):
                    async with asyncio.timeout(_DRAIN_TIMEOUT):
                        await asyncio.shield(task)
                task.cancel()
                await asyncio.wait({task})
                self._flush_partial()
        finally:
            if task is not None:
                task.cancel()
            if self._transport is not None:
                self._transport.close()
            elif self._reader is not None:
                self._reader.close()

    @property
    def lines(self) -> int:
        """Lines the server wrote in all."""
        return self._budget.lines

    def describe_tail(self) -> str:
        """`; its stderr ended with: ...` for an error message, or nothing."""
        if not self.tail:
            return ""
        return "; its stderr ended with:\n" + "\n".join(self.tail)

    async def _pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(_CHUNK):
            lines = (self._partial + chunk).split(b"\n")
            self._partial = lines.pop()
            if len(self._partial) > LINE_CHARS * 4:  # a line without end: cut it now
                lines.append(self._partial)
                self._partial = b""
            for line in lines:
                self._line(line)
        self._flush_partial()

    def _flush_partial(self) -> None:
        if self._partial:
            self._line(self._partial)
            self._partial = b""

    def _line(self, raw: bytes) -> None:
        text = self._budget.cut(raw.decode("utf-8", "replace"))
        self.tail.append(text)
        self._budget.log(text)
