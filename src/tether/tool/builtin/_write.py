"""`Write`: create or overwrite a file; overwriting needs a fresh Read."""

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
from tether.tool.builtin._text import encode_text, load_text, unencodable

__all__ = ["Write", "WriteInput"]


@field_docs
class WriteInput(BaseModel):
    """Arguments of `Write`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    file_path: str
    """Path of the file to write: absolute, or relative to the working directory."""
    content: str
    """The complete new content of the file."""


class Write(FileToolBase):
    """Create a file, or replace an existing one that was read first and has not changed."""

    name = "Write"
    description = (
        "Write a file to the local filesystem, creating it (and missing parent directories) "
        "or replacing its whole content. `file_path` may be absolute or relative to the "
        "working directory.\n"
        "- To overwrite an existing file you must have read it with Read in this session, "
        "and it must not have changed on disk since; otherwise the call fails and tells "
        "you to read it again.\n"
        "- Prefer Edit for changes to part of an existing file: it sends only the change.\n"
        "- An existing file keeps its encoding (e.g. UTF-16, a UTF-8 BOM); `content` is "
        "written as given, line endings included."
    )
    input_model = WriteInput
    access = "write"

    def target_path(self, tool_input: BaseModel) -> str:
        """The file's path as the call gives it."""
        assert isinstance(tool_input, WriteInput)
        return tool_input.file_path

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Write the file in a worker thread and record its new mtime as read."""
        assert isinstance(tool_input, WriteInput)
        path = resolve_path(tool_input.file_path, context.cwd)
        return await asyncio.to_thread(self._write, path, tool_input.content, context)

    def _write(self, path: Path, content: str, context: ToolContext) -> ToolOutput:
        if path.is_dir():
            return error(f"{path} is a directory; give the path of a file inside it.")
        existed = path.exists()
        encoding = "utf-8"
        if existed:
            reason = stale_reason(path, context, "overwrite")
            if reason is not None:
                return error(reason)
            current = load_text(path)
            if current is not None:
                encoding = current.encoding
        note = ""
        try:
            data = encode_text(content, encoding)
        except UnicodeEncodeError:
            # The whole content is new, so nothing already in the file is re-encoded.
            data = encode_text(content, "utf-8")
            note = (
                f" It was in a legacy 8-bit encoding (read as {encoding}), which cannot hold "
                f"{unencodable(content, encoding)}; it is UTF-8 now."
            )
        failed = write_file(path, data)
        if failed is not None:
            return error(failed)
        # The model knows exactly what is in the file now: later edits need no re-read.
        read_record(context)[str(path)] = path.stat().st_mtime_ns
        lines = content.count("\n") + (0 if content.endswith("\n") or not content else 1)
        verb = "Updated" if existed else "Created"
        return f"{verb} {path} ({lines} lines, {len(content)} characters).{note}"
