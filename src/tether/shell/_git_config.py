"""Whether a repository's own config makes a read-only git command run a program.

`git status` in a work dir whose `.git/config` sets `core.fsmonitor` runs that program;
`core.pager`, `diff.*.textconv`, `filter.*.process` and many more do the same. The repo
config is read at decision time (cached by each file's identity and size): the local
config, the worktree config and every file they `include` (whatever the `includeIf`
condition), plus the hooks an index refresh runs.
"""

from __future__ import annotations

import fnmatch
import os
import re
import stat
from dataclasses import dataclass
from enum import Enum
from typing import Generic, Literal, TypeVar

from tether.shell._git_syntax import config_entries

__all__ = ["git_config_problem", "local_remotes", "repository_problem"]

# Keys (lower-case, `section.subsection.name`) whose value is a program git may run, or a
# place that changes what git reads or runs. Matched with fnmatch.
_PROGRAM_KEYS = (
    "core.fsmonitor*",
    "core.pager",
    "core.editor",
    "core.sshcommand",
    "core.hookspath",
    "core.askpass",
    "core.gitproxy",
    "core.alternaterefscommand",
    "core.worktree",
    "diff.external",
    "diff.tool",
    "diff.guitool",
    "diff.*.command",
    "diff.*.textconv",
    "merge.tool",
    "merge.guitool",
    "merge.*.driver",
    "filter.*",
    "pager.*",
    "alias.*",
    "credential.*",
    "gpg.program",
    "gpg.*.program",
    "gpg.ssh.defaultkeycommand",
    "sequence.editor",
    "uploadpack.packobjectshook",
    "ssh.variant",
    "interactive.difffilter",
    "difftool.*",
    "mergetool.*",
    "browser.*",
    "web.browser",
    "man.*",
    "imap.tunnel",
    "instaweb.*",
    "sendemail.*",
    "trailer.*",
    "hook.*",
    "guitool.*",
    "remote.*.uploadpack",
    "remote.*.receivepack",
    "remote.*.vcs",
    "submodule.*.update",
    "protocol.*",
    "url.*",
)
_INCLUDE_KEYS = ("include.path", "includeif.*.path")
_MAX_INCLUDES = 10
_INDEX_HOOKS = ("post-index-change", "reference-transaction")
"""Hooks a read-only command may run: `git status` refreshes (writes) the index."""

_PROGRAM_RE = re.compile("|".join(fnmatch.translate(p) for p in _PROGRAM_KEYS))
_INCLUDE_RE = re.compile("|".join(fnmatch.translate(p) for p in _INCLUDE_KEYS))


@dataclass(frozen=True, slots=True)
class _Parsed:
    """What one config file says, without following its includes."""

    problem: str | None
    """A key that runs a program, or why the file can't be read."""
    includes: tuple[str, ...] = ()
    """The files it includes, as written (`~` and relative paths unresolved)."""
    worktree_config: bool = False
    """True if it sets `extensions.worktreeConfig` (git then reads `config.worktree`)."""


_T = TypeVar("_T")


class _Miss(Enum):
    MISS = 0


_MISS = _Miss.MISS


class _StatCache(Generic[_T]):
    """What was found at a path, kept while the path's stat signature stays the same.

    At most 256 paths are kept; past that the cache starts again.
    """

    def __init__(self) -> None:
        self._entries: dict[str, tuple[tuple[int, ...], _T]] = {}

    def get(self, path: str, signature: tuple[int, ...]) -> _T | Literal[_Miss.MISS]:
        """The value kept for `path` under `signature`, else `_MISS`."""
        cached = self._entries.get(path)
        return cached[1] if cached is not None and cached[0] == signature else _MISS

    def put(self, path: str, signature: tuple[int, ...], value: _T) -> _T:
        """Keep `value` for `path` under `signature`; return it."""
        if len(self._entries) > 256:
            self._entries.clear()
        self._entries[path] = (signature, value)
        return value


def _identity(st: os.stat_result) -> tuple[int, int, int]:
    """A directory's signature: its identity and mtime (an entry added or removed moves it)."""
    return (st.st_dev, st.st_ino, st.st_mtime_ns)


_ABSENT = _Parsed(None)
_parsed_files: _StatCache[_Parsed] = _StatCache()


def _parse_file(path: str, text: str) -> _Parsed:
    entries = config_entries(text)
    if entries is None:
        return _Parsed(f"git would reject the config {path}, so tether cannot tell what it sets")
    includes: list[str] = []
    worktree = False
    for key, value in entries:
        if _PROGRAM_RE.match(key):
            return _Parsed(f"the repository config {path} sets `{key}`, which can run a program")
        if _INCLUDE_RE.match(key):
            includes.append(value)
        worktree = worktree or key == "extensions.worktreeconfig"
    return _Parsed(None, tuple(includes), worktree)


def _parsed(path: str) -> _Parsed:
    """One config file, parsed; cached by the file's identity, size and mtime."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return _ABSENT
    except (OSError, ValueError):
        return _Parsed(f"git would read the config {path}, which tether cannot read")
    signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _parsed_files.get(path, signature)
    if cached is not _MISS:
        return cached
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return _Parsed(f"git would read the config {path}, which tether cannot read")
    return _parsed_files.put(path, signature, _parse_file(path, text))


def _config_problem(path: str, depth: int = 0) -> tuple[str | None, bool]:
    """The problem of a config file and its includes, and whether one enables config.worktree."""
    parsed = _parsed(path)
    if parsed.problem is not None:
        return parsed.problem, False
    worktree = parsed.worktree_config
    for value in parsed.includes:
        if depth >= _MAX_INCLUDES:
            return f"the repository config {path} includes too deeply", False
        included = os.path.expanduser(value)
        if not os.path.isabs(included):
            included = os.path.join(os.path.dirname(path), included)
        problem, more = _config_problem(included, depth + 1)
        if problem is not None:
            return problem, False
        worktree = worktree or more
    return None, worktree


def _is_git_dir(path: str) -> bool:
    try:
        if not stat.S_ISREG(os.stat(os.path.join(path, "HEAD")).st_mode):
            return False
    except (OSError, ValueError):
        return False
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(
        os.path.join(path, "refs")
    )


def _git_dir(cwd: str) -> tuple[str, os.stat_result | None] | None | bool:
    """The git dir git finds from `cwd`, and its `stat` when known.

    `None` if there is none; False if it can't be told.
    """
    current = os.path.abspath(cwd)
    while True:
        dot_git = os.path.join(current, ".git")
        try:
            st: os.stat_result | None = os.stat(dot_git)
        except (OSError, ValueError):
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            return dot_git, st
        if st is not None and stat.S_ISREG(st.st_mode):
            found = _gitdir_file(current, dot_git)
            return found if found is False else (found, None)
        if _is_git_dir(current):
            return current, None  # a bare repository (or a git dir) as the cwd or above it
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _gitdir_file(where: str, dot_git: str) -> str | Literal[False]:
    """The git dir a `.git` file (`gitdir: ...`) names; False if it can't be read."""
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            line = f.readline(4096).strip()
    except OSError:
        return False
    if not line.startswith("gitdir:"):
        return False
    return os.path.normpath(os.path.join(where, line.removeprefix("gitdir:").strip()))


@dataclass(frozen=True, slots=True)
class _Layout:
    """Where git reads a repository's config and hooks from, for one git dir."""

    config: str
    worktree_config: str
    hooks: tuple[str, ...]


_layouts: _StatCache[_Layout] = _StatCache()
_index_hooks: _StatCache[str | None] = _StatCache()
_any_hooks: _StatCache[str | None] = _StatCache()


def _common_dir(git_dir: str) -> tuple[str, bool]:
    """The common dir of a git dir, and whether a `commondir` file named it."""
    path = os.path.join(git_dir, "commondir")
    if not os.path.lexists(path):
        return git_dir, False  # the common case: no linked worktree
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            target = f.readline(4096).strip()
    except OSError:
        return git_dir, True
    return (os.path.normpath(os.path.join(git_dir, target)) if target else git_dir), True


def _layout(git_dir: str, st: os.stat_result | None) -> _Layout:
    """The layout of `git_dir`, cached while the directory itself is unchanged.

    A `commondir` file added or removed changes the directory's mtime; one that exists is
    read every time (its content may change without touching the directory).
    """
    key = _identity(st) if st is not None else None
    cached = _layouts.get(git_dir, key) if key is not None else _MISS
    if cached is not _MISS:
        return cached
    common, linked = _common_dir(git_dir)
    layout = _Layout(
        config=os.path.join(common, "config"),
        worktree_config=os.path.join(git_dir, "config.worktree"),
        hooks=tuple(dict.fromkeys((os.path.join(common, "hooks"), os.path.join(git_dir, "hooks")))),
    )
    if key is not None and not linked:
        _layouts.put(git_dir, key, layout)
    return layout


def _index_hook(hooks: str) -> str | None:
    """The index hook in a hooks dir, if any.

    Cached by the directory's identity and mtime: adding, removing or renaming a hook
    changes it.
    """
    try:
        st = os.stat(hooks)
    except (OSError, ValueError):
        return None
    cached = _index_hooks.get(hooks, _identity(st))
    if cached is not _MISS:
        return cached
    found = next((h for h in _INDEX_HOOKS if os.path.lexists(os.path.join(hooks, h))), None)
    return _index_hooks.put(hooks, _identity(st), found)


def _any_hook(hooks: str) -> str | None:
    """Any hook in a hooks dir (not a `.sample`), cached by the directory's identity and mtime."""
    try:
        st = os.stat(hooks)
    except (OSError, ValueError):
        return None
    cached = _any_hooks.get(hooks, _identity(st))
    if cached is not _MISS:
        return cached
    try:
        names = sorted(n for n in os.listdir(hooks) if not n.endswith(".sample"))
    except OSError:
        names = ["(unreadable)"]
    return _any_hooks.put(hooks, _identity(st), names[0] if names else None)


def _bare_hooks_problem(git_dir: str, layout: _Layout) -> str | None:
    for hooks in layout.hooks:
        hook = _any_hook(hooks)
        if hook is not None:
            return f"the repository {git_dir} has a `{hook}` hook, which git may run"
    return None


def repository_problem(path: str) -> str | None:
    """Why git reaching the repository at `path` (`git push ./emb`) may run its programs.

    Its config, and any of its hooks (a clone can deliver a bare repository with hooks,
    never a `.git/hooks`). `None` if `path` is no repository or nothing there runs.

    Args:
        path: A directory named on the command line.
    """
    if _is_git_dir(path):
        git_dir = path
    elif os.path.isdir(os.path.join(path, ".git")):
        git_dir = os.path.join(path, ".git")
    else:
        return None
    layout = _layout(git_dir, None)
    problem, worktree = _config_problem(layout.config)
    if problem is None and worktree:
        problem = _config_problem(layout.worktree_config)[0]
    return problem or _bare_hooks_problem(git_dir, layout)


def git_config_problem(cwd: str, *, bare_hooks: bool = False) -> str | None:
    """Why a read-only git command run in `cwd` may run a program the repo chose, or `None`.

    Args:
        cwd: The directory git runs in.
        bare_hooks: Also ask for any hook of a bare repository git finds from `cwd` (one a
            clone may have delivered inside the work dir); for commands that may run
            hooks beyond the index ones (`git commit`, `git tag` under a rule).
    """
    found = _git_dir(cwd)
    if found is None:
        return None
    if found is False or found is True:
        return "git may find a repository here that tether cannot read"
    layout = _layout(*found)
    if bare_hooks and found[1] is None and not found[0].endswith("/.git"):
        hooks = _bare_hooks_problem(found[0], layout)
        if hooks is not None:
            return hooks
    problem, worktree = _config_problem(layout.config)
    if problem is None and worktree:
        problem = _config_problem(layout.worktree_config)[0]
    if problem is not None:
        return problem
    for hooks in layout.hooks:
        hook = _index_hook(hooks)
        if hook is not None:
            return f"the repository has a `{hook}` hook, which git status may run"
    return None


def local_remotes(cwd: str) -> list[str]:
    """The remotes of the repository found from `cwd` whose URL is a local directory.

    `git push x` runs the hooks of the repository `x` names; `remote.x.url = ./emb` may be
    a bare repository inside the work dir. Relative URLs are taken from the work tree and
    from the git dir (either may be what git uses); `file://` is stripped.
    """
    found = _git_dir(cwd)
    if found is None or found is False or found is True:
        return []
    git_dir = found[0]
    config = _layout(*found).config
    try:
        with open(config, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return []
    urls: list[str] = []
    for key, value in config_entries(text) or ():
        if not (key.startswith("remote.") and key.endswith((".url", ".pushurl"))):
            continue
        value = value.removeprefix("file://")
        if "://" in value or (":" in value.split("/", 1)[0] and not value.startswith(".")):
            continue  # a network URL, or `host:path`
        value = os.path.expanduser(value)
        for base in (os.path.dirname(git_dir), git_dir):
            urls.append(os.path.normpath(os.path.join(base, value)))
    return urls
