"""Typing while a reply runs: keys are read as they come, lines queued until the reply ends.

While a reply streams, the terminal is in cbreak mode (no echo, keys one by one, Ctrl+C
still interrupts) and an event-loop reader collects the keys: the line being typed is
drawn below the stream as it grows, Enter queues it (shown at once as queued), Backspace
edits, escape sequences (arrows) are dropped. When
the reply ends, the queued lines are sent one after another, and a line still being typed
is put back into the input line.
"""

from __future__ import annotations

import asyncio
import codecs
import os
import sys
import termios
import tty
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

__all__ = ["TypeAhead"]

_ERASE = ("\x7f", "\x08")


class TypeAhead:
    """The lines typed ahead (`queued`) and the one being typed (`pending`).

    `on_queued` gets each line as Enter queues it; `on_typing` the line being typed
    whenever it changes, and "" when it should not be drawn (queued, or the terminal
    handed over).
    """

    def __init__(
        self,
        on_queued: Callable[[str], None],
        on_typing: Callable[[str], None] = lambda line: None,
    ) -> None:
        self.pending = ""
        self.queued: list[str] = []
        self._on_queued = on_queued
        self._on_typing = on_typing
        self._escape = ""
        self._reading: tuple[int, Any] | None = None
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace")

    def feed(self, data: str) -> None:
        """Take typed characters."""
        before = self.pending
        self._feed(data)
        if self.pending != before:
            self._on_typing(self.pending)

    def _feed(self, data: str) -> None:
        for char in data:
            if self._escape or char == "\x1b":
                self._escape += char  # ESC [ ... final letter, or ESC and one key
                if len(self._escape) > 1 and (char.isalpha() or char == "~"):
                    self._escape = ""
                elif len(self._escape) == 2 and char not in "[O":
                    self._escape = ""
                continue
            if char in "\r\n":
                self._queue()
            elif char in _ERASE:
                self.pending = self.pending[:-1]
            elif char == "\x15":  # Ctrl+U
                self.pending = ""
            elif char.isprintable() or char == "\t":
                self.pending += char

    def _queue(self) -> None:
        line, self.pending = self.pending, ""
        if line.strip():
            self.queued.append(line)
            self._on_queued(line)

    def take_pending(self) -> str:
        """The line being typed (now the input line's), cleared here."""
        line, self.pending = self.pending, ""
        return line

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Collect keys from the terminal for the duration (nothing if stdin is no tty)."""
        if not sys.stdin.isatty():
            yield
            return
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        self._start(fd)
        self._reading = (fd, saved)
        try:
            yield
        finally:
            self._reading = None
            self._stop(fd, saved)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Give the terminal back for the duration (a question asked during a reply)."""
        reading = self._reading
        if reading is None:
            yield
            return
        self._stop(*reading)
        try:
            yield
        finally:
            self._start(reading[0])

    def _start(self, fd: int) -> None:
        tty.setcbreak(fd)
        asyncio.get_running_loop().add_reader(fd, self._read, fd)
        if self.pending:
            self._on_typing(self.pending)

    def _stop(self, fd: int, saved: Any) -> None:
        self._on_typing("")  # the terminal is someone else's now: the line goes
        asyncio.get_running_loop().remove_reader(fd)
        termios.tcsetattr(fd, termios.TCSADRAIN, saved)

    def _read(self, fd: int) -> None:
        try:
            data = os.read(fd, 4096)
        except OSError:
            return
        self.feed(self._decoder.decode(data))
