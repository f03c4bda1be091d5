"""`Glob`: find files by name pattern, newest first."""

from __future__ import annotations

import asyncio
import os

from pydantic import BaseModel, ConfigDict

from tether.tool._base import ToolContext, ToolOutput
from tether.tool.builtin._common import FileToolBase, error, resolve_path
from tether.tool.builtin._globbing import compile_glob, literal_prefix, walk_files

__all__ = ["Glob", "GlobInput"]


class GlobInput(BaseModel):
    """Arguments of `Glob`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    pattern: str
    """Glob pattern matched against paths relative to `path`: `*` and `?` stay within one
    directory, `**` spans directories, `{a,b}` alternates, `[abc]` is a character class.
    E.g. `**/*.py`, `src/**/*.{ts,tsx}`, `*.md`."""
    path: str | None = None
    """Directory to search in, absolute or relative to the working directory. Defaults to
    the working directory."""


class Glob(FileToolBase):
    """Find files whose path matches a glob pattern, most recently modified first.

    Args:
        max_results: Paths returned at most; the result says when there were more.
        respect_gitignore: Skip files that .gitignore files ignore (`.git` is always skipped).
    """

    name = "Glob"
    input_model = GlobInput
    is_read_only = True
    is_concurrency_safe = True
    access = "read"

    def __init__(self, *, max_results: int = 100, respect_gitignore: bool = True) -> None:
        self.max_results = max_results
        self.respect_gitignore = respect_gitignore
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
        """The directory searched, as the call gives it (an absolute pattern's own base)."""
        assert isinstance(tool_input, GlobInput)
        if os.path.isabs(tool_input.pattern):
            return literal_prefix(tool_input.pattern)[0] or "/"
        return tool_input.path or "."

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Walk the tree in a worker thread and list matches newest first."""
        assert isinstance(tool_input, GlobInput)
        base = resolve_path(tool_input.path or ".", context.cwd)
        pattern = tool_input.pattern
        if os.path.isabs(pattern):
            base, pattern = resolve_path("/", context.cwd), pattern.lstrip("/")
        if not await asyncio.to_thread(base.is_dir):
            return error(f"Directory does not exist: {base}. Give an existing directory as `path`.")
        found = await asyncio.to_thread(self._find, str(base), pattern)
        if not found:
            return f"No files match {tool_input.pattern!r} under {base}."
        found.sort(key=lambda item: (-item[1], item[0]))
        paths = [path for path, _ in found[: self.max_results]]
        text = "\n".join(paths)
        if len(found) > self.max_results:
            text += (
                f"\n\n[Showing the {self.max_results} most recently modified of {len(found)} "
                "matches. Use a more specific pattern or path to see the others.]"
            )
        return text

    def _find(self, base: str, pattern: str) -> list[tuple[str, float]]:
        prefix, rest = literal_prefix(pattern)
        root = os.path.join(base, prefix) if prefix else base
        if not os.path.isdir(root):
            return []
        matcher = compile_glob(rest)
        depth = None if "**" in rest else rest.count("/") + 1
        skip = len(root.rstrip("/")) + 1
        found: list[tuple[str, float]] = []
        for entry in walk_files(root, gitignore=self.respect_gitignore, max_depth=depth):
            if matcher.match(entry.path[skip:]):
                try:
                    found.append((entry.path, entry.stat().st_mtime))
                except OSError:
                    continue  # removed while we looked
        return found
