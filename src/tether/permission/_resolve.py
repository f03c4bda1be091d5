"""Resolving paths: `~`, `..` and symlinks, and the work dirs' real paths.

Nothing here remembers a file system answer across decisions, except `resolve_dir` (a
directory's real path, checked by one `stat` every time) and `real_dir` (the work dirs,
the trust roots). Within one decision a `memo` shares resolutions, and a path whose
parent was resolved afresh in the same decision costs one `lstat` instead of a full
resolution.
"""

from __future__ import annotations

import os
import stat
from functools import lru_cache

from tether.permission._sensitive import _token_of
from tether.permission._types import PermissionContext

__all__ = [
    "ResolvedPath",
    "inside",
    "real_dir",
    "resolve_dir",
    "resolve_fresh",
    "resolve_path",
    "token_for",
    "work_dir_tuple",
    "work_dirs",
]

_ANCHOR_DEPTH = 3
"""How many components below a resolved ancestor are resolved one `lstat` each."""


@lru_cache(maxsize=4096)
def cached_normpath(path: str) -> str:
    """`os.path.normpath`, memoised: a pure string operation (no file system access)."""
    return os.path.normpath(path)


@lru_cache(maxsize=4096)
def _normjoin(cwd: str, path: str) -> str:
    return os.path.normpath(os.path.join(cwd, path))


@lru_cache(maxsize=4096)
def _climbs(cwd: str, path: str) -> bool:
    """Whether `path` taken from `cwd` has a `..` part."""
    return ".." in path.split("/") or ".." in cwd.split("/")


@lru_cache(maxsize=4096)
def _split(path: str) -> tuple[str, str]:
    return os.path.split(path)


class ResolvedPath:
    """A path as written (`~` and `..` resolved) and as it really is (symlinks resolved)."""

    __slots__ = ("fresh", "lexical", "links", "real")

    def __init__(
        self, lexical: str, real: str, fresh: bool = True, links: int | None = None
    ) -> None:
        self.lexical = lexical
        self.real = real
        self.fresh = fresh
        """False for a directory taken from the `stat`-checked cache (never an anchor)."""
        self.links = links
        """The hard links of a regular file (1 for anything else), if the resolution saw
        them; `None` if not known."""

    def candidates(self) -> tuple[str, ...]:
        """Both forms, without duplicates."""
        return (self.real,) if self.real == self.lexical else (self.real, self.lexical)


_O_PATH = getattr(os, "O_PATH", 0)
_Memo = dict[str, ResolvedPath]


def _realpath(lexical: str, memo: _Memo | None = None) -> str:
    # On Linux, opening with O_PATH and reading the fd's link resolves every symlink in
    # three system calls; `os.path.realpath` needs one `lstat` per component. A path that
    # does not exist yet (a file about to be written) is its resolved parent plus its name,
    # unless its name is a dangling symlink, which `realpath` follows to where a write lands.
    if not _O_PATH:
        return os.path.realpath(lexical)
    try:
        fd = os.open(lexical, _O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        parent, name = _split(lexical)
        if not name or parent == lexical:
            return os.path.realpath(lexical)
        try:
            os.lstat(lexical)
        except FileNotFoundError:
            return os.path.join(_parent_real(parent, memo), name)
        except OSError:
            pass
        return os.path.realpath(lexical)
    except (OSError, ValueError):
        return os.path.realpath(lexical)
    try:
        real = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        real = ""
    finally:
        os.close(fd)
    if real.startswith("/") and not real.endswith(" (deleted)"):
        return real
    return os.path.realpath(lexical)


def _parent_real(parent: str, memo: _Memo | None) -> str:
    if memo is None:
        return _realpath(parent)
    found = memo.get(parent)
    if found is None or not found.fresh:
        found = memo[parent] = _resolve_in(parent, memo)
    return found.real


def _step(parent_real: str, lexical: str, name: str, memo: _Memo) -> tuple[str, int | None]:
    """The real path of `lexical` (its parent's was just resolved), and its `links`."""
    links: int | None = 1
    try:
        st = os.lstat(lexical)
    except FileNotFoundError:
        pass  # nothing there, not even a dangling symlink: what `_realpath` answers too
    except (OSError, ValueError):
        return _realpath(lexical, memo), None
    else:
        if stat.S_ISLNK(st.st_mode):
            return _realpath(lexical, memo), None
        if stat.S_ISREG(st.st_mode):
            links = st.st_nlink
    # Its parent's real path plus its own name (`os.path.join`, for a name without `/`).
    joined = parent_real + name if parent_real.endswith("/") else parent_real + "/" + name
    return joined, links


def _resolve_in(lexical: str, memo: _Memo) -> ResolvedPath:
    """`lexical` resolved on an ancestor resolved afresh in this decision."""
    parent, name = _split(lexical)
    anchor = memo.get(parent)
    if anchor is not None and anchor.fresh and name:  # the common case: a file in the cwd
        real, links = _step(anchor.real, lexical, name, memo)
        return ResolvedPath(lexical, real, links=links)
    chain: list[tuple[str, str]] = []
    current = lexical
    for _ in range(_ANCHOR_DEPTH):
        parent, name = _split(current)
        if not name or parent == current:
            break
        chain.append((current, name))
        anchor = memo.get(parent)
        if anchor is not None and anchor.fresh:
            real, links = anchor.real, None
            for path, part in reversed(chain):
                real, links = _step(real, path, part, memo)
                if path != lexical:
                    memo[path] = ResolvedPath(path, real, links=links)
            return ResolvedPath(lexical, real, links=links)
        current = parent
    return ResolvedPath(lexical, _realpath(lexical, memo))


def resolve_path(path: str, cwd: str, memo: _Memo | None = None) -> ResolvedPath:
    """Resolve `~`, relative parts, `..` and symlinks of `path` taken from `cwd`.

    `memo` caches resolutions within one decision (never across decisions: the file
    system may change between two calls).
    """
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    lexical = _normjoin(cwd, expanded)
    if _climbs(cwd, expanded):
        # The kernel takes `..` after the symlink before it, not lexically: `link/../x`
        # is the `x` beside the link's target, wherever that is. Resolve it as written
        # (kept out of `memo`, whose keys are lexical paths).
        return ResolvedPath(lexical, os.path.realpath(os.path.join(cwd, expanded)))
    if memo is not None:
        found = memo.get(lexical)
        if found is None:
            found = memo[lexical] = _resolve_in(lexical, memo)
        return found
    return ResolvedPath(lexical, _realpath(lexical))


def resolve_fresh(directory: str, memo: _Memo) -> None:
    """Resolve a directory afresh into `memo`, so paths inside it cost one `lstat` each."""
    lexical = cached_normpath(directory)
    found = memo.get(lexical)
    if found is None or not found.fresh:
        memo[lexical] = ResolvedPath(lexical, _realpath(lexical, memo))


_DIR_CACHE: dict[str, tuple[str, int, int]] = {}
_DIR_CACHE_SIZE = 1024


def resolve_dir(directory: str) -> ResolvedPath:
    """Resolve a directory a command runs in, with a cache checked by one `stat`.

    A cached real path is reused only while the directory still has the same device and
    inode. A directory has exactly one location, so a hit names the directory that was
    resolved before. The result is never an anchor for other paths (`fresh` is False):
    files inside the directory are always resolved afresh.
    """
    lexical = cached_normpath(directory)
    try:
        st = os.stat(lexical)
    except (OSError, ValueError):
        return ResolvedPath(lexical, os.path.realpath(lexical), fresh=False)
    cached = _DIR_CACHE.get(lexical)
    if cached is not None and cached[1] == st.st_dev and cached[2] == st.st_ino:
        return ResolvedPath(lexical, cached[0], fresh=False, links=1)  # a directory
    real = _realpath(lexical)
    if len(_DIR_CACHE) >= _DIR_CACHE_SIZE:
        _DIR_CACHE.clear()
    if os.path.isdir(lexical):
        _DIR_CACHE[lexical] = (real, st.st_dev, st.st_ino)
    return ResolvedPath(lexical, real, fresh=False)


@lru_cache(maxsize=256)
def real_dir(directory: str) -> str:
    # Work dirs are the trust roots and are resolved once per process: if one is later
    # replaced by a symlink, fresh paths resolve elsewhere and stop being inside, which
    # only makes decisions stricter.
    return os.path.realpath(directory)


def work_dirs(context: PermissionContext) -> list[str]:
    """The real paths of the context's work dirs (the process's cwd if none)."""
    return list(work_dir_tuple(context))


def work_dir_tuple(context: PermissionContext) -> tuple[str, ...]:
    """`work_dirs` as a tuple."""
    dirs = context.working_directories
    if not dirs:
        return (real_dir(os.getcwd()),)
    found = _real_dirs(tuple(dirs))
    if found is None:  # `~` follows `$HOME` as it is now
        return tuple(real_dir(os.path.expanduser(d) if d.startswith("~") else d) for d in dirs)
    return found


@lru_cache(maxsize=256)
def _real_dirs(dirs: tuple[str, ...]) -> tuple[str, ...] | None:
    if any(d.startswith("~") for d in dirs):
        return None
    return tuple(real_dir(d) for d in dirs)  # `real_dir` is per process already


def inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def token_for(resolved: ResolvedPath) -> str | None:
    return token_of(resolved.lexical, resolved.real)


def token_of(lexical: str, real: str) -> str | None:
    """The sensitive token of a path as written or as it really is, or `None`."""
    token = _token_of(lexical)
    if token is None and real != lexical:
        token = _token_of(real)
    return token
