"""Whether a recursive read (`grep -R`, `rg`, `find`, `du`, ...) stays inside the work dirs.

Checked at decision time, every time: the tree may change between two calls. The walk
follows every symlink to a directory (as `grep -R`, `find -L` and `rg -L` do) and gives
up, asking, past a bound on the entries it looks at.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable

__all__ = ["MAX_WALK_ENTRIES", "Judge", "walk_problem"]

MAX_WALK_ENTRIES = 20_000
"""Entries a decision looks at before it asks instead (a walk that long is not cheap)."""

Judge = Callable[[str, str, int], str | None]
"""`judge(path, real_path, hard_links)`: why a reader of contents may not read an entry."""


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def _links(real: str) -> int:
    """The hard links of a regular file (1 for anything else, or if it is gone)."""
    try:
        st = os.stat(real)
    except (OSError, ValueError):
        return 1
    return st.st_nlink if stat.S_ISREG(st.st_mode) else 1


def _entry_problem(
    entry: os.DirEntry[str],
    dirs: tuple[str, ...],
    judge: Judge | None,
    skip: frozenset[str],
    todo: list[str],
) -> str | None:
    """What is wrong with one entry of a walked directory; directories to walk go to `todo`."""
    path = entry.path
    if entry.is_symlink():
        real = os.path.realpath(path)
        is_dir = os.path.isdir(real)
        if is_dir and entry.name in skip:
            return None
        problem = judge(path, real, 1 if is_dir else _links(real)) if judge is not None else None
        if problem is None and not any(_inside(real, d) for d in dirs):
            problem = f"{path} links outside the working directories"
        if problem is None and is_dir:
            todo.append(real)
        return problem
    try:
        st = entry.stat(follow_symlinks=False)
    except OSError:
        return None  # gone, or unreadable: the command can't read it either
    if stat.S_ISDIR(st.st_mode):
        if entry.name in skip:
            return None
        todo.append(path)
    if judge is None:
        return None
    return judge(path, path, st.st_nlink if stat.S_ISREG(st.st_mode) else 1)


def walk_problem(
    roots: list[str],
    dirs: tuple[str, ...],
    *,
    judge: Judge | None = None,
    hidden: bool = True,
    skip_dirs: frozenset[str] = frozenset(),
    limit: int = MAX_WALK_ENTRIES,
) -> str | None:
    """Why a recursive read of `roots` may leave `dirs` or read what it must not, or `None`.

    Args:
        roots: Real paths the walk starts from (files and missing paths are skipped).
        dirs: The work dirs' real paths.
        judge: For readers of file contents (`grep -r`, `rg`): asked about every entry
            (sensitive paths, rules, hard links). Listers of names only check the links.
        hidden: False if the reader skips hidden entries (`rg` without `--hidden`).
        skip_dirs: Names of directories the reader skips (`grep --exclude-dir=.git`).
        limit: Entries to look at before giving up.
    """
    todo = [r for r in roots if os.path.isdir(r)]
    seen: set[tuple[int, int]] = set()
    count = 0
    while todo:
        directory = todo.pop()
        try:
            st = os.stat(directory)
            if (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            entries = list(os.scandir(directory))
        except OSError:
            continue  # gone, or unreadable: the command can't read it either
        for entry in entries:
            count += 1
            if count > limit:
                return f"the tree under {roots[0]} has more than {limit} entries to check"
            if not hidden and entry.name.startswith("."):
                continue
            problem = _entry_problem(entry, dirs, judge, skip_dirs, todo)
            if problem is not None:
                return problem
    return None
