"""`Read`: a text file with line numbers, paged; images as data blocks."""

from __future__ import annotations

import asyncio
import base64
import errno
import io
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, AnyStr, BinaryIO, Generic

from pydantic import BaseModel, ConfigDict, Field

from tether._field_docs import field_docs
from tether.message import Base64Source, DataBlock, TextBlock, ToolResultBlock
from tether.tool._base import ToolContext, ToolOutput
from tether.tool.builtin._common import FileToolBase, error, read_record, resolve_path
from tether.tool.builtin._text import SNIFF_BYTES, sniff

__all__ = ["Read", "ReadInput"]


@field_docs
class ReadInput(BaseModel):
    """Arguments of `Read`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    file_path: str
    """Path of the file to read: absolute, or relative to the working directory."""
    offset: int | None = Field(default=None, ge=0)
    """1-based line number to start reading at (0 is treated as 1). Omit to start at the
    top; use it with `limit` to page through files too long to read at once."""
    limit: int | None = Field(default=None, ge=1)
    """Maximum number of lines to return. Omit to read up to the tool's line cap."""


@dataclass(slots=True)
class _Window:
    lines: list[str] = field(default_factory=list)
    first: int = 0
    last: int = 0
    total: int = 0
    capped_by_chars: bool = False


_CHUNK = 1 << 20
_UTF8_CONTINUATION = bytes(range(0x80, 0xC0))


def _utf8_width(data: bytes) -> int:
    """Characters in UTF-8 bytes (continuation bytes do not start one)."""
    return len(data.translate(None, _UTF8_CONTINUATION))


@dataclass(frozen=True, slots=True)
class _Lines(Generic[AnyStr]):
    """How to split and show the lines of a file read as bytes or as decoded text."""

    newline: AnyStr
    eol: AnyStr
    """The characters a line may end with (stripped before counting what was cut)."""
    width: Callable[[AnyStr], int]
    """Characters in a piece of a line."""
    decode: Callable[[AnyStr], str]
    cap: int
    """Units of a line kept; the rest is skipped in chunks and only counted."""


def _bounded_lines(f: IO[AnyStr], kind: _Lines[AnyStr]) -> Iterator[tuple[AnyStr, int]]:
    """Each line as (its first `kind.cap` units, how many characters come after them).

    A line longer than the cap is skipped in chunks, never held whole: memory stays
    bounded for a gigabyte without a newline.
    """
    while line := f.readline(kind.cap):
        if line.endswith(kind.newline) or len(line) < kind.cap:
            yield line, 0
            continue
        cut = 0
        while rest := f.readline(_CHUNK):
            if rest.endswith(kind.newline):
                cut += kind.width(rest.rstrip(kind.eol))
                break
            cut += kind.width(rest)
        yield line, cut


def _skip_lines(f: BinaryIO, count: int) -> int:
    """Move `f` past `count` lines, a chunk at a time; the lines skipped (fewer at the end)."""
    skipped = 0
    unterminated = False
    while skipped < count:
        at = f.tell()
        chunk = f.read(_CHUNK)
        if not chunk:
            return skipped + (1 if unterminated else 0)  # a last line without a newline
        newlines = chunk.count(b"\n")
        if skipped + newlines < count:
            skipped += newlines
            unterminated = not chunk.endswith(b"\n")
            continue
        end = -1
        for _ in range(count - skipped):
            end = chunk.index(b"\n", end + 1)
        f.seek(at + end + 1)
        return count
    return skipped


def _count_rest(f: IO[AnyStr], newline: AnyStr) -> int:
    """Lines left in `f` (a last line without a newline counts too)."""
    count = 0
    unterminated = False
    while chunk := f.read(_CHUNK):
        count += chunk.count(newline)
        unterminated = not chunk.endswith(newline)
    return count + (1 if unterminated else 0)


def _open_regular(path: Path) -> BinaryIO | str:
    """`path` opened for reading if it is a regular file, else why it cannot be read.

    Devices and FIFOs are never opened (opening some has effects, reading others never
    ends); the file is opened non-blocking and checked again, so nothing swapped in
    between can block the worker thread either.
    """
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return _not_regular(path)
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        return _cannot_open(path, exc)
    f = os.fdopen(fd, "rb")
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        f.close()
        return _not_regular(path)
    return f


def _not_regular(path: Path) -> str:
    if path.is_dir():
        return f"{path} is a directory, not a file. List it with Glob or Bash `ls`."
    return f"{path} is not a regular file (a device, FIFO or socket); Read reads files only."


def _cannot_open(path: Path, exc: OSError) -> str:
    if exc.errno == errno.ENOENT:
        return (
            f"File does not exist: {path}. Check the path (the working directory is "
            "the base of relative paths), or find the file with Glob."
        )
    if exc.errno == errno.ELOOP:
        return f"{path} is a loop of symbolic links that never reaches a file."
    return f"Cannot read {path}: {exc.strerror or exc}."


class Read(FileToolBase):
    """Read a text file with line numbers, page by page; images come back as data blocks.

    Args:
        max_lines: Lines returned when the call gives no `limit` (and the most it may ask).
        max_chars: Characters of numbered output per call; longer windows are cut at a
            line boundary with a note saying where to continue.
        max_line_length: Longer lines are cut to this many characters.
        max_image_bytes: Larger images are refused.
    """

    name = "Read"
    input_model = ReadInput
    is_read_only = True
    is_concurrency_safe = True
    is_idempotent = True
    access = "read"

    def __init__(
        self,
        *,
        max_lines: int = 2000,
        max_chars: int = 100_000,
        max_line_length: int = 2000,
        max_image_bytes: int = 5 * 1024 * 1024,
    ) -> None:
        self.max_lines = max_lines
        self.max_chars = max_chars
        self.max_line_length = max_line_length
        self.max_image_bytes = max_image_bytes
        self.description = (
            "Read a file from the local filesystem. `file_path` may be absolute or relative "
            "to the working directory.\n"
            "- Text comes back in `cat -n` form: each line prefixed by its 1-based line "
            "number and a tab. The number and tab are not part of the file; leave them out "
            "when you quote text to Edit.\n"
            f"- By default up to {max_lines} lines are returned from the top. For longer "
            "files, page with `offset` (1-based line to start at) and `limit` (number of "
            "lines); the result says which offset to use next.\n"
            f"- Output is capped at {max_chars} characters per call and lines longer than "
            f"{max_line_length} characters are cut.\n"
            "- Images (PNG, JPEG, GIF, WebP) come back as images. Other binary files are "
            "refused; list directories with Glob or Bash, not Read.\n"
            "- Read a file before you Write over it or Edit it."
        )

    def target_path(self, tool_input: BaseModel) -> str:
        """The file's path as the call gives it."""
        assert isinstance(tool_input, ReadInput)
        return tool_input.file_path

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Read the file (in a worker thread) and record its mtime for Write and Edit."""
        assert isinstance(tool_input, ReadInput)
        path = resolve_path(tool_input.file_path, context.cwd)
        result, mtime_ns = await asyncio.to_thread(self._read, path, tool_input)
        if mtime_ns is not None and not isinstance(result, ToolResultBlock):
            # The mtime from before reading: if the file changes meanwhile, Write refuses.
            read_record(context)[str(path)] = mtime_ns
        return result

    def _read(self, path: Path, args: ReadInput) -> tuple[ToolOutput, int | None]:
        opened = _open_regular(path)
        if isinstance(opened, str):
            return error(opened), None
        with opened as f:
            st = os.fstat(f.fileno())
            try:
                return self._read_file(path, f, st.st_size, args), st.st_mtime_ns
            except OSError as exc:
                return error(f"Cannot read {path}: {exc.strerror or exc}."), None

    def _read_file(self, path: Path, f: BinaryIO, size: int, args: ReadInput) -> ToolOutput:
        # Not `size`: files in /proc and /sys say 0 bytes and have content.
        head = f.read(SNIFF_BYTES) or b""
        if not head:
            return f"(The file {path} is empty.)"
        kind = sniff(head, complete=len(head) < SNIFF_BYTES)
        if kind.kind == "image":
            return self._image(path, f, size, kind.media_type or "application/octet-stream")
        if kind.kind == "binary":
            return error(
                f"{path} looks like a binary file ({size} bytes); Read shows text files and "
                "images only. Inspect it with Bash (e.g. `file` or `xxd | head`)."
            )
        start = max(args.offset or 1, 1)
        limit = args.limit or self.max_lines
        f.seek(0)
        window = self._window(f, kind.encoding, start, limit)
        if not window.lines:
            return error(
                f"offset {start} is past the end of {path}, which has {window.total} lines. "
                f"Use an offset between 1 and {window.total}."
            )
        return self._format(window)

    def _image(self, path: Path, f: BinaryIO, size: int, media_type: str) -> ToolOutput:
        if size > self.max_image_bytes:
            return error(
                f"{path} is an image of {size} bytes, over the {self.max_image_bytes}-byte "
                "limit. Make a smaller copy with Bash (e.g. ImageMagick `convert`) and read that."
            )
        f.seek(0)
        data = base64.b64encode(f.read(self.max_image_bytes)).decode("ascii")
        return [
            TextBlock(text=f"Image {path} ({media_type}, {size} bytes):"),
            DataBlock(source=Base64Source(media_type=media_type, data=data)),
        ]

    def _window(self, f: BinaryIO, encoding: str, start: int, limit: int) -> _Window:
        if encoding == "utf-16":
            # A newline byte can be half of another character: read decoded text.
            text = io.TextIOWrapper(f, encoding, errors="replace", newline="\n")
            chars = _Lines("\n", "\r\n", len, str, self.max_line_length + 2)
            return self._window_of(text, chars, start, limit)
        if encoding == "utf-8-sig":
            f.read(3)
        skipped = _skip_lines(f, start - 1)
        if skipped < start - 1:
            return _Window(first=start, total=skipped)
        raw = _Lines(
            b"\n",
            b"\r\n",
            _utf8_width if encoding.startswith("utf-8") else len,
            lambda line: line.decode(encoding, errors="replace"),
            4 * self.max_line_length + 2,  # enough bytes for the characters shown
        )
        return self._window_of(f, raw, start, limit, lineno=skipped)

    def _window_of(
        self, f: IO[AnyStr], kind: _Lines[AnyStr], start: int, limit: int, *, lineno: int = 0
    ) -> _Window:
        """The window from line `start`; `f` is positioned after line `lineno`."""
        window = _Window(first=start)
        used = 0
        for line, cut in _bounded_lines(f, kind):
            lineno += 1
            if lineno < start:
                continue
            entry = self._entry(lineno, kind.decode(line), cut)
            full = len(window.lines) >= limit
            if not full and used + len(entry) + 1 > self.max_chars and window.lines:
                window.capped_by_chars = full = True
            if full:
                window.total = lineno + _count_rest(f, kind.newline)
                return window
            window.lines.append(entry)
            window.last = lineno
            used += len(entry) + 1
        window.total = lineno
        return window

    def _entry(self, lineno: int, line: str, cut: int = 0) -> str:
        line = line.rstrip("\r\n")
        if len(line) > self.max_line_length or cut:
            cut += len(line) - self.max_line_length
            line = f"{line[: self.max_line_length]}… [{cut} more characters on this line]"
        return f"{lineno:>6}\t{line}"

    def _format(self, window: _Window) -> str:
        body = "\n".join(window.lines)
        if window.last >= window.total:
            if window.first > 1:
                body += f"\n\n[Lines {window.first}-{window.last} of {window.total}: end of file.]"
            return body
        why = (
            f"output is capped at {self.max_chars} characters"
            if window.capped_by_chars
            else f"{window.total} lines in all"
        )
        return (
            f"{body}\n\n[Showing lines {window.first}-{window.last} of {window.total} ({why}). "
            f"To read more, call Read again with offset={window.last + 1} "
            f"(and a limit of up to {self.max_lines} lines).]"
        )
