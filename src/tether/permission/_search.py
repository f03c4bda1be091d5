"""What a search tool leaves out of its output: files `Read` could not read without asking."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

from tether.permission._path_rules import path_scope
from tether.permission._resolve import resolve_path
from tether.permission._types import PermissionContext

__all__ = ["search_filter"]


def search_filter(tool_name: str, context: PermissionContext, *, cwd: str) -> Callable[[str], bool]:
    """A predicate that is True for a file a search may show in its output.

    Left out: sensitive paths, files a `Read` (or `tool_name`) deny or ask rule matches,
    and files with more than one hard link (another name may be outside the work dirs),
    unless an allow rule names the file. Answers are kept for the predicate's lifetime
    (one call of the tool).

    Args:
        tool_name: The searching tool (its own rules apply besides `Read`'s).
        context: Rules and work dirs.
        cwd: The directory relative paths are taken from.
    """
    scope = path_scope(context)
    seen: dict[str, bool] = {}

    def shown(path: str) -> bool:
        found = seen.get(path)
        if found is None:
            found = seen[path] = _shown(path)
        return found

    def _shown(path: str) -> bool:
        if "\x00" in path:
            return False
        resolved = resolve_path(path, cwd)
        kind = scope.verdict(tool_name, "read", resolved).kind
        if kind == "allow":
            return True
        if kind in ("deny", "ask", "sensitive"):
            return False
        try:
            st = os.stat(resolved.real)
        except OSError:
            return True  # gone: nothing to show but its name, which the search found
        return not (stat.S_ISREG(st.st_mode) and st.st_nlink > 1)

    return shown
