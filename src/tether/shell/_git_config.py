"""Whether a repository's own config makes a read-only git command run a program.

`git status` in a work dir whose `.git/config` sets `core.fsmonitor` runs that program;
`core.pager`, `diff.*.textconv`, `filter.*.process` and many more do the same. The repo
config is read at decision time (cached by each file's identity and size): the local
config, the worktree config and every file they `include` (whatever the `includeIf`
condition), plus the hooks an index refresh runs.
"""

from __future__ import annotations

import os
import stat
from fnmatch import fnmatchcase

from tether.shell._git_syntax import config_entries

__all__ = ["git_config_problem"]

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

_cache: dict[str, tuple[tuple[int, int, int, int], list[tuple[str, str]] | None]] = {}


def _entries(path: str) -> list[tuple[str, str]] | None:
    """The (key, value) pairs of one config file; `[]` if absent, `None` if unreadable."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return []
    except (OSError, ValueError):
        return None
    signature = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    cached = _cache.get(path)
    if cached is not None and cached[0] == signature:
        return cached[1]
    try:
        with open(path, "rb") as f:
            text = f.read(1 << 20).decode("utf-8", "surrogateescape")
    except (OSError, ValueError):
        return None
    found = config_entries(text)
    if len(_cache) > 256:
        _cache.clear()
    _cache[path] = (signature, found)
    return found


def _config_problem(path: str, depth: int = 0) -> str | None:
    entries = _entries(path)
    if entries is None:
        return f"git would read the config {path}, which tether cannot read"
    for key, value in entries:
        if any(fnmatchcase(key, pattern) for pattern in _PROGRAM_KEYS):
            return f"the repository config {path} sets `{key}`, which can run a program"
        if any(fnmatchcase(key, pattern) for pattern in _INCLUDE_KEYS):
            if depth >= _MAX_INCLUDES:
                return f"the repository config {path} includes too deeply"
            included = os.path.expanduser(value)
            if not os.path.isabs(included):
                included = os.path.join(os.path.dirname(path), included)
            problem = _config_problem(included, depth + 1)
            if problem is not None:
                return problem
    return None


def _is_git_dir(path: str) -> bool:
    try:
        if not stat.S_ISREG(os.stat(os.path.join(path, "HEAD")).st_mode):
            return False
    except (OSError, ValueError):
        return False
    return os.path.isdir(os.path.join(path, "objects")) and os.path.isdir(
        os.path.join(path, "refs")
    )


def _git_dir(cwd: str) -> str | None | bool:
    """The git dir git finds from `cwd`; `None` if none; False if it can't be told."""
    current = os.path.abspath(cwd)
    while True:
        dot_git = os.path.join(current, ".git")
        try:
            mode = os.stat(dot_git).st_mode
        except (OSError, ValueError):
            mode = 0
        if stat.S_ISDIR(mode):
            return dot_git
        if stat.S_ISREG(mode):
            return _gitdir_file(current, dot_git)
        if _is_git_dir(current):
            return current  # a bare repository (or a git dir) as the cwd or above it
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _gitdir_file(where: str, dot_git: str) -> str | bool:
    """The git dir a `.git` file (`gitdir: ...`) names; False if it can't be read."""
    try:
        with open(dot_git, encoding="utf-8", errors="replace") as f:
            line = f.readline(4096).strip()
    except OSError:
        return False
    if not line.startswith("gitdir:"):
        return False
    return os.path.normpath(os.path.join(where, line.removeprefix("gitdir:").strip()))


def _common_dir(git_dir: str) -> str:
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8", errors="replace") as f:
            target = f.readline(4096).strip()
    except OSError:
        return git_dir
    return os.path.normpath(os.path.join(git_dir, target)) if target else git_dir


def git_config_problem(cwd: str) -> str | None:
    """Why a read-only git command run in `cwd` may run a program the repo chose, or `None`.

    Args:
        cwd: The directory git runs in.
    """
    git_dir = _git_dir(cwd)
    if git_dir is None:
        return None
    if git_dir is False:
        return "git may find a repository here that tether cannot read"
    assert isinstance(git_dir, str)
    common = _common_dir(git_dir)
    for config in dict.fromkeys(
        (os.path.join(common, "config"), os.path.join(git_dir, "config.worktree"))
    ):
        problem = _config_problem(config)
        if problem is not None:
            return problem
    for hooks in dict.fromkeys((os.path.join(common, "hooks"), os.path.join(git_dir, "hooks"))):
        for hook in _INDEX_HOOKS:
            if os.path.lexists(os.path.join(hooks, hook)):
                return f"the repository has a `{hook}` hook, which git status may run"
    return None
