"""`Read`: a text file with line numbers, paged; images as data blocks."""

from __future__ import annotations

import asyncio
import base64
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from pydantic import BaseModel, ConfigDict, Field

from tether.message import Base64Source, DataBlock, TextBlock, ToolResultBlock
from tether.tool._base import ToolContext, ToolOutput
from tether.tool.builtin._common import FileToolBase, error, read_record, resolve_path
from tether.tool.builtin._text import SNIFF_BYTES, sniff

__all__ = ["Read", "ReadInput"]


class ReadInput(BaseModel):
    """Arguments of `Read`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

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


def _count_rest(f: BinaryIO, ended_with_newline: bool) -> int:
    """Lines left in `f` after a line that did or did not end with a newline."""
    count = 0
    last = b"\n" if ended_with_newline else b""
    while chunk := f.read(1 << 20):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (1 if last not in (b"\n", b"") else 0)


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
        if not path.is_file():
            return self._not_a_file(path), None
        stat = path.stat()
        return self._read_file(path, stat.st_size, args), stat.st_mtime_ns

    def _not_a_file(self, path: Path) -> ToolOutput:
        if path.is_dir():
            return error(f"{path} is a directory, not a file. List it with Glob or Bash `ls`.")
        if not path.exists():
            return error(
                f"File does not exist: {path}. Check the path (the working directory is "
                "the base of relative paths), or find the file with Glob."
            )
        return error(f"{path} is not a regular file; Read reads files only.")

    def _read_file(self, path: Path, size: int, args: ReadInput) -> ToolOutput:
        with path.open("rb") as f:
            head = f.read(SNIFF_BYTES)
        kind = sniff(head, complete=size <= SNIFF_BYTES)
        if kind.kind == "image":
            return self._image(path, size, kind.media_type or "application/octet-stream")
        if kind.kind == "binary":
            return error(
                f"{path} looks like a binary file ({size} bytes); Read shows text files and "
                "images only. Inspect it with Bash (e.g. `file` or `xxd | head`)."
            )
        if size == 0:
            return f"(The file {path} is empty.)"
        start = max(args.offset or 1, 1)
        limit = args.limit or self.max_lines
        window = self._window(path, kind.encoding, start, limit)
        if not window.lines:
            return error(
                f"offset {start} is past the end of {path}, which has {window.total} lines. "
                f"Use an offset between 1 and {window.total}."
            )
        return self._format(window)

    def _image(self, path: Path, size: int, media_type: str) -> ToolOutput:
        if size > self.max_image_bytes:
            return error(
                f"{path} is an image of {size} bytes, over the {self.max_image_bytes}-byte "
                "limit. Make a smaller copy with Bash (e.g. ImageMagick `convert`) and read that."
            )
        data = base64.b64encode(path.read_bytes()).decode("ascii")
        return [
            TextBlock(text=f"Image {path} ({media_type}, {size} bytes):"),
            DataBlock(source=Base64Source(media_type=media_type, data=data)),
        ]

    def _window(self, path: Path, encoding: str, start: int, limit: int) -> _Window:
        if encoding == "utf-16":
            return self._window_of_text(path.read_text(encoding, errors="replace"), start, limit)
        window = _Window(first=start)
        used = 0
        lineno = 0
        with path.open("rb") as f:
            if encoding == "utf-8-sig":
                f.read(3)
            while raw := f.readline():
                lineno += 1
                if lineno < start:
                    continue
                entry = self._entry(lineno, raw.decode(encoding, errors="replace"))
                full = len(window.lines) >= limit
                if not full and used + len(entry) + 1 > self.max_chars and window.lines:
                    window.capped_by_chars = full = True
                if full:
                    window.total = lineno + _count_rest(f, raw.endswith(b"\n"))
                    return window
                window.lines.append(entry)
                window.last = lineno
                used += len(entry) + 1
        window.total = lineno
        return window

    def _window_of_text(self, text: str, start: int, limit: int) -> _Window:
        lines = text.splitlines()
        window = _Window(first=start, total=len(lines))
        used = 0
        for lineno in range(start, min(len(lines), start + limit - 1) + 1):
            entry = self._entry(lineno, lines[lineno - 1])
            if used + len(entry) + 1 > self.max_chars and window.lines:
                window.capped_by_chars = True
                break
            window.lines.append(entry)
            window.last = lineno
            used += len(entry) + 1
        return window

    def _entry(self, lineno: int, line: str) -> str:
        line = line.rstrip("\r\n")
        if len(line) > self.max_line_length:
            cut = len(line) - self.max_line_length
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
