"""Resolving paths: `~`, `..` and symlinks, and the work dirs' real paths."""

from __future__ import annotations

import os
from functools import lru_cache

from tether.permission._sensitive import _token_of
from tether.permission._types import PermissionContext

__all__ = [
    "ResolvedPath",
    "inside",
    "real_dir",
    "resolve_dir",
    "resolve_path",
    "token_for",
    "work_dirs",
]


@lru_cache(maxsize=4096)
def cached_normpath(path: str) -> str:
    """`os.path.normpath`, memoised: a pure string operation (no file system access)."""
    return os.path.normpath(path)


@lru_cache(maxsize=4096)
def _normjoin(cwd: str, path: str) -> str:
    return os.path.normpath(os.path.join(cwd, path))


class ResolvedPath:
    """A path as written (`~` and `..` resolved) and as it really is (symlinks resolved)."""

    __slots__ = ("lexical", "real")

    def __init__(self, lexical: str, real: str) -> None:
        self.lexical = lexical
        self.real = real

    def candidates(self) -> tuple[str, ...]:
        """Both forms, without duplicates."""
        return (self.real,) if self.real == self.lexical else (self.real, self.lexical)


_O_PATH = getattr(os, "O_PATH", 0)


def _realpath(lexical: str) -> str:
    # On Linux, opening with O_PATH and reading the fd's link resolves every symlink in
    # three system calls; `os.path.realpath` needs one `lstat` per component. A path that
    # does not exist yet (a file about to be written) is its resolved parent plus its name,
    # unless its name is a dangling symlink, which `realpath` follows to where a write lands.
    if not _O_PATH:
        return os.path.realpath(lexical)
    try:
        fd = os.open(lexical, _O_PATH | os.O_CLOEXEC)
    except FileNotFoundError:
        parent, name = os.path.split(lexical)
        if not name or parent == lexical:
            return os.path.realpath(lexical)
        try:
            os.lstat(lexical)
        except FileNotFoundError:
            return os.path.join(_realpath(parent), name)
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


def resolve_path(path: str, cwd: str, memo: dict[str, ResolvedPath] | None = None) -> ResolvedPath:
    """Resolve `~`, relative parts, `..` and symlinks of `path` taken from `cwd`.

    `memo` caches resolutions within one decision (never across decisions: the file
    system may change between two calls).
    """
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    lexical = _normjoin(cwd, expanded)
    if memo is not None:
        found = memo.get(lexical)
        if found is None:
            found = memo[lexical] = ResolvedPath(lexical, _realpath(lexical))
        return found
    return ResolvedPath(lexical, _realpath(lexical))


_DIR_CACHE: dict[str, tuple[str, int, int]] = {}
_DIR_CACHE_SIZE = 1024


def resolve_dir(directory: str) -> ResolvedPath:
    """Resolve a directory a command runs in, with a cache checked by one `stat`.

    A cached real path is reused only while the directory still has the same device and
    inode. A directory has exactly one location, so a hit names the directory that was
    resolved before; files inside it are always resolved afresh.
    """
    lexical = cached_normpath(directory)
    try:
        st = os.stat(lexical)
    except (OSError, ValueError):
        return ResolvedPath(lexical, os.path.realpath(lexical))
    cached = _DIR_CACHE.get(lexical)
    if cached is not None and cached[1] == st.st_dev and cached[2] == st.st_ino:
        return ResolvedPath(lexical, cached[0])
    real = _realpath(lexical)
    if len(_DIR_CACHE) >= _DIR_CACHE_SIZE:
        _DIR_CACHE.clear()
    if os.path.isdir(lexical):
        _DIR_CACHE[lexical] = (real, st.st_dev, st.st_ino)
    return ResolvedPath(lexical, real)


@lru_cache(maxsize=256)
def real_dir(directory: str) -> str:
    # Work dirs are the trust roots and are resolved once per process: if one is later
    # replaced by a symlink, fresh paths resolve elsewhere and stop being inside, which
    # only makes decisions stricter.
    return os.path.realpath(directory)


def work_dirs(context: PermissionContext) -> list[str]:
    """The real paths of the context's work dirs (the process's cwd if none)."""
    dirs = context.working_directories or [os.getcwd()]
    return [real_dir(os.path.expanduser(d) if d.startswith("~") else d) for d in dirs]


def inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


def token_for(resolved: ResolvedPath) -> str | None:
    token = _token_of(resolved.lexical)
    if token is None and resolved.real != resolved.lexical:
        token = _token_of(resolved.real)
    return token
