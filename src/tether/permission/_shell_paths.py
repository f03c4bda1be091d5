"""Which directories a shell command may run in, and which of its words may be paths."""

from __future__ import annotations

import glob
import os

from tether.permission._resolve import cached_normpath
from tether.permission._shell_parse import ShellAnalysis

__all__ = ["expand_glob", "possible_dirs"]

_MAX_DIRS = 16
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
        new = [os.path.normpath(os.path.join(d, expanded)) for d in dirs]
        dirs.extend(d for d in dict.fromkeys(new) if d not in dirs)
        if len(dirs) > _MAX_DIRS:
            return None
    return dirs


def expand_glob(pattern: str, cwd: str) -> list[str] | None:
    """What bash would expand a glob to (hidden files included); `None` if unsure.

    `None` also when a match would reach the command as an option (`*` next to a file
    named `-delete`), the classic wildcard injection.
    """
    if "[:" in pattern or "[=" in pattern or "[." in pattern:
        return None  # POSIX classes are not understood by Python's glob
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
