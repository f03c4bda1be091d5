"""`Edit`: replace an exact, unique string in a file, keeping its encoding and line endings."""

from __future__ import annotations

import asyncio
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tether._field_docs import field_docs
from tether.tool._base import ToolContext, ToolOutput
from tether.tool.builtin._common import (
    FileToolBase,
    error,
    read_record,
    resolve_path,
    stale_reason,
    write_file,
)
from tether.tool.builtin._text import TextFile, encode_text, load_text, unencodable

__all__ = ["Edit", "EditInput"]

_SNIPPET_CONTEXT = 3


@field_docs
class EditInput(BaseModel):
    """Arguments of `Edit`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    file_path: str
    """Path of the file to change: absolute, or relative to the working directory."""
    old_string: str
    """The exact text to replace, character for character (indentation included, line
    numbers from Read excluded). Empty only to create a new file."""
    new_string: str
    """The text to put in its place; must differ from `old_string`."""
    replace_all: bool = False
    """Replace every occurrence instead of requiring exactly one."""


def _line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def _snippet(text: str, start: int, length: int) -> str:
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()  # the newline ending the last line does not start another
    first = max(_line_of(text, start) - _SNIPPET_CONTEXT, 1)
    last = min(_line_of(text, start + length) + _SNIPPET_CONTEXT, len(lines))
    return "\n".join(f"{n:>6}\t{lines[n - 1].rstrip(chr(13))}" for n in range(first, last + 1))


def _not_found(path: Path, text: str, old: str) -> str:
    hint = ""
    first = old.strip().split("\n")[0].strip()
    if first and first in text:
        hint = (
            f" Its first line {first!r} does occur (at line {_line_of(text, text.index(first))}),"
            " so the whitespace, indentation or a later line differs."
        )
    return (
        f"old_string was not found in {path}.{hint} Read the file again and copy the text "
        "exactly, without the line-number prefixes Read adds."
    )


class Edit(FileToolBase):
    """Replace exact text in a file that was read first and has not changed since."""

    name = "Edit"
    description = (
        "Replace exact text in a file. `file_path` may be absolute or relative to the "
        "working directory.\n"
        "- Read the file first in this session; if it changed on disk since, read it again.\n"
        "- `old_string` must match the file exactly, whitespace and indentation included "
        "(leave out the line-number prefix Read shows). It must occur exactly once: add "
        "surrounding lines to make it unique, or set `replace_all` to change every "
        "occurrence (e.g. to rename a variable).\n"
        "- `new_string` must differ from `old_string`.\n"
        "- With an empty `old_string` and a file that does not exist yet, the file is "
        "created with `new_string` as its content.\n"
        "- The file keeps its encoding and line endings (CRLF files stay CRLF)."
    )
    input_model = EditInput
    access = "write"

    def target_path(self, tool_input: BaseModel) -> str:
        """The file's path as the call gives it."""
        assert isinstance(tool_input, EditInput)
        return tool_input.file_path

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Apply the edit in a worker thread and record the file's new mtime as read."""
        assert isinstance(tool_input, EditInput)
        path = resolve_path(tool_input.file_path, context.cwd)
        return await asyncio.to_thread(self._edit, path, tool_input, context)

    def _edit(self, path: Path, args: EditInput, context: ToolContext) -> ToolOutput:
        if args.old_string == args.new_string:
            return error(
                "old_string and new_string are identical, so the edit would change nothing. "
                "Give the text you want in `new_string`."
            )
        if not path.exists():
            if args.old_string:
                return error(
                    f"File does not exist: {path}. To create it, call Edit with an empty "
                    "old_string, or use Write."
                )
            return self._save(path, TextFile("", "utf-8", False), args.new_string, context, 0)
        if path.is_dir():
            return error(f"{path} is a directory; give the path of a file inside it.")
        reason = stale_reason(path, context, "edit")
        if reason is not None:
            return error(reason)
        current = load_text(path)
        if current is None:
            return error(f"{path} is a binary file; Edit changes text files only.")
        return self._replace(path, current, args, context)

    def _replace(
        self, path: Path, current: TextFile, args: EditInput, context: ToolContext
    ) -> ToolOutput:
        if not args.old_string:
            return error(
                f"old_string is empty but {path} already exists. Quote the text to replace, "
                "or use Write to replace the whole file."
            )
        text, old, new = current.text, args.old_string, args.new_string
        if current.crlf:
            # Match on LF so the model's strings work whichever endings it used.
            text = text.replace("\r\n", "\n")
            old, new = old.replace("\r\n", "\n"), new.replace("\r\n", "\n")
        count = text.count(old)
        if count == 0:
            return error(_not_found(path, text, old))
        if count > 1 and not args.replace_all:
            lines: list[str] = []
            at = -1
            while (at := text.find(old, at + 1)) != -1 and len(lines) < 10:
                lines.append(str(_line_of(text, at)))
            return error(
                f"old_string occurs {count} times in {path} (at lines {', '.join(lines)}). "
                "Include more surrounding lines to make it unique, or set replace_all=true "
                "to replace every occurrence."
            )
        first = text.index(old)
        updated = text.replace(old, new) if args.replace_all else text.replace(old, new, 1)
        if current.crlf:
            updated = updated.replace("\n", "\r\n")
        return self._save(path, current, updated, context, count, first, len(new))

    def _save(
        self,
        path: Path,
        current: TextFile,
        updated: str,
        context: ToolContext,
        count: int,
        first: int = 0,
        length: int = 0,
    ) -> ToolOutput:
        try:
            data = encode_text(updated, current.encoding)
        except UnicodeEncodeError:
            return error(
                f"{path} is in a legacy 8-bit encoding (read as {current.encoding}), which "
                f"cannot hold {unencodable(updated, current.encoding)}. Use characters it "
                "can hold, or convert the file to UTF-8 first (e.g. Bash `iconv -f latin1 "
                "-t utf-8 FILE > FILE.new && mv FILE.new FILE`) and Read it again."
            )
        failed = write_file(path, data)
        if failed is not None:
            return error(failed)
        read_record(context)[str(path)] = path.stat().st_mtime_ns
        if count == 0:
            return f"Created {path}."
        shown = updated.replace("\r\n", "\n") if current.crlf else updated
        where = "occurrence" if count == 1 else "occurrences"
        return (
            f"Replaced {count} {where} in {path}. The edited region now reads:\n"
            f"{_snippet(shown, first, length)}"
        )
