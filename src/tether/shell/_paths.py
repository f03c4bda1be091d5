"""Which directories a shell command may run in, and which of its words may be paths."""

from __future__ import annotations

import glob
import os
from fnmatch import fnmatchcase
from functools import lru_cache

from tether.shell._parse import ShellAnalysis

__all__ = ["expand_glob", "possible_dirs"]

_MAX_DIRS = 16
cached_normpath = lru_cache(maxsize=4096)(os.path.normpath)  # pure string work
_MAX_GLOB_MATCHES = 500


def possible_dirs(analysis: ShellAnalysis, cwd: str) -> list[str] | None:
    """Every directory a part of the command may run in; `None` if one can't be known.

    Each `cd`/`pushd` target is taken from every directory seen so far, and the whole set
    applies to every part: an over-approximation that stays sound for subshells, loops and
    `popd`, where the textual order is not the order of execution.
    """
    if not analysis.cd_targets:
        return [cached_normpath(cwd)]
    dirs = [os.path.normpath(cwd)]
    for target in analysis.cd_targets:
        if target is None:
            return None
        expanded = os.path.expanduser(target) if target.startswith("~") else target
        new = [where for d in dirs for where in _cd_candidates(d, expanded)]
        dirs.extend(d for d in dict.fromkeys(new) if d not in dirs)
        if len(dirs) > _MAX_DIRS:
            return None
    return dirs


def _cd_candidates(cwd: str, target: str) -> list[str]:
    """Where `cd target` run in `cwd` may land.

    Bash's `cd` takes `..` lexically (`link/..` is `cwd`), but `cd -P`, and `cd -L` when
    the lexical directory does not exist, take it after the link, as the kernel does
    (`link/../x` is beside the link's target). A relative name is looked up in `CDPATH`
    first (not `./x`, `../x`).
    """
    joined = os.path.join(cwd, target)
    found = [os.path.normpath(joined)]
    if ".." in target.split("/"):
        found.append(os.path.realpath(joined))
    cdpath = os.environ.get("CDPATH")
    if cdpath and not target.startswith(("/", "./", "../")) and target not in (".", ".."):
        for entry in cdpath.split(":"):
            found.append(os.path.normpath(os.path.join(cwd, entry or ".", target)))
    return found


def _may_match_dots(part: str) -> bool:
    """Whether a glob component such as `.*` or `.?` may match `.` or `..` in bash."""
    return (
        part.startswith(".")
        and any(c in part for c in "*?[")
        and (fnmatchcase(".", part) or fnmatchcase("..", part))
    )


def expand_glob(pattern: str, cwd: str) -> list[str] | None:
    """What bash would expand a glob to (hidden files included); `None` if unsure.

    `pattern` is in Python's `glob` syntax (see `ShellWord.pattern`).

    `None` also when a match would reach the command as an option (`*` next to a file
    named `-delete`), the classic wildcard injection.
    """
    if "[:" in pattern or "[=" in pattern or "[." in pattern:
        return None  # POSIX classes are not understood by Python's glob
    if any(_may_match_dots(part) for part in pattern.split("/")):
        return None  # Python never yields `.` or `..`; bash before 5.2 does for `.*`
    expanded = os.path.expanduser(pattern) if pattern.startswith("~") else pattern
    matches: list[str] = []
    for match in glob.iglob(expanded, root_dir=cwd, include_hidden=True):
        if match.startswith("-"):
            return None
        matches.append(os.path.join(cwd, match))
        if len(matches) > _MAX_GLOB_MATCHES:
            return None
    # The literal part before the first glob character is read as well (and is what bash
    # passes on when nothing matches).
    full = os.path.join(cwd, expanded)
    literal = full[: min(i for i, c in enumerate(full) if c in "*?[")]
    matches.append(os.path.dirname(literal) or "/")
    return matches
