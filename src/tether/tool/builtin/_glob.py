"""`Glob`: find files by name pattern, newest first."""

from __future__ import annotations

import asyncio
import heapq
import os
import threading
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict

from tether._field_docs import field_docs
from tether.tool._base import ToolContext, ToolOutput
from tether.tool.builtin._common import FileToolBase, error, resolve_path
from tether.tool.builtin._globbing import compile_glob, literal_prefix, walk_files

__all__ = ["Glob", "GlobInput"]


@field_docs
class GlobInput(BaseModel):
    """Arguments of `Glob`."""

    model_config = ConfigDict(defer_build=True, extra="forbid")

    pattern: str
    """Glob pattern matched against paths relative to `path`: `*` and `?` stay within one
    directory, `**` spans directories, `{a,b}` alternates, `[abc]` is a character class.
    E.g. `**/*.py`, `src/**/*.{ts,tsx}`, `*.md`."""
    path: str | None = None
    """Directory to search in, absolute or relative to the working directory. Defaults to
    the working directory."""


@dataclass(slots=True)
class _Found:
    newest: list[tuple[float, str]] = field(default_factory=list)
    """A min-heap of the newest matches (mtime, path), at most `max_results` long."""
    matches: int = 0
    scanned: int = 0
    stopped: bool = False
    """The walk hit `max_scanned` before the end of the tree."""


class Glob(FileToolBase):
    """Find files whose path matches a glob pattern, most recently modified first.

    Args:
        max_results: Paths returned at most; the result says when there were more.
        respect_gitignore: Skip files that .gitignore files ignore (`.git` is always skipped).
        max_scanned: Files looked at, at most, per call; in a bigger tree the walk stops
            there and the result says so. Memory is bounded by `max_results` either way.
    """

    name = "Glob"
    input_model = GlobInput
    is_read_only = True
    is_concurrency_safe = True
    is_idempotent = True
    access = "read"

    def __init__(
        self,
        *,
        max_results: int = 100,
        respect_gitignore: bool = True,
        max_scanned: int = 500_000,
    ) -> None:
        self.max_results = max_results
        self.respect_gitignore = respect_gitignore
        self.max_scanned = max_scanned
        skipped = "and files ignored by .gitignore are " if respect_gitignore else "is "
        self.description = (
            "Find files by path pattern, e.g. `**/*.py` or `src/**/*.{ts,tsx}`. Patterns "
            "are matched against paths relative to `path` (default: the working "
            "directory); `*` stays within a directory, `**` crosses directories.\n"
            f"- Returns absolute paths, most recently modified first, at most {max_results}; "
            "narrow the pattern or path if the result says there were more.\n"
            f"- The `.git` directory {skipped}skipped.\n"
            "- Use Grep to search file contents."
        )

    def target_path(self, tool_input: BaseModel) -> str:
        """The directory the walk starts in (what the permission check sees).

        That is `path` joined with the pattern's literal directories (`../x/*` searches
        `../x`), or an absolute pattern's own base.
        """
        assert isinstance(tool_input, GlobInput)
        prefix = literal_prefix(tool_input.pattern)[0]
        if os.path.isabs(tool_input.pattern):
            return prefix or "/"
        base = tool_input.path or "."
        return os.path.join(base, prefix) if prefix else base

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Walk the tree in a worker thread and list matches newest first."""
        assert isinstance(tool_input, GlobInput)
        base = resolve_path(tool_input.path or ".", context.cwd)
        pattern = tool_input.pattern
        if os.path.isabs(pattern):
            base, pattern = resolve_path("/", context.cwd), pattern.lstrip("/")
        if not await asyncio.to_thread(base.is_dir):
            return error(f"Directory does not exist: {base}. Give an existing directory as `path`.")
        stop = threading.Event()
        try:
            found = await asyncio.to_thread(self._find, str(base), pattern, stop)
        finally:
            stop.set()  # a cancelled call stops its walk too
        if not found.matches:
            if found.stopped:
                return (
                    f"No files match {tool_input.pattern!r} in the first {found.scanned} "
                    f"files under {base}; the walk stopped there. Narrow `path` or the pattern."
                )
            return f"No files match {tool_input.pattern!r} under {base}."
        newest = sorted(found.newest, key=lambda item: (-item[0], item[1]))
        text = "\n".join(path for _, path in newest)
        if found.stopped:
            text += (
                f"\n\n[Stopped after looking at {found.scanned} files: the tree is too big "
                f"to search whole. Showing the {len(newest)} most recently modified of the "
                f"{found.matches} matches found so far. Narrow `path` or the pattern.]"
            )
        elif found.matches > len(newest):
            text += (
                f"\n\n[Showing the {len(newest)} most recently modified of {found.matches} "
                "matches. Use a more specific pattern or path to see the others.]"
            )
        return text

    def _find(self, base: str, pattern: str, stop: threading.Event) -> _Found:
        found = _Found()
        prefix, rest = literal_prefix(pattern)
        root = os.path.join(base, prefix) if prefix else base
        if not os.path.isdir(root):
            return found
        matcher = compile_glob(rest)
        depth = None if "**" in rest else rest.count("/") + 1
        skip = len(root.rstrip("/")) + 1
        for entry in walk_files(root, gitignore=self.respect_gitignore, max_depth=depth):
            if found.scanned >= self.max_scanned or stop.is_set():
                found.stopped = True
                break
            found.scanned += 1
            if not matcher.match(entry.path[skip:]):
                continue
            try:
                item = (entry.stat().st_mtime, entry.path)
            except OSError:
                continue  # removed while we looked
            found.matches += 1
            if len(found.newest) < self.max_results:
                heapq.heappush(found.newest, item)
            elif item > found.newest[0]:
                heapq.heapreplace(found.newest, item)
        return found
