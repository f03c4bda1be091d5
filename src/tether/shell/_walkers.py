"""Which read-only commands walk directory trees, how, and from where.

`grep -r`, `rg`, `find`, `fd`, `ls -R`, `du`, `tree`, `diff -r` and `git diff --no-index`
walk; the decision then walks the same trees (`_walk.py`). Whether a walker also reads
`.` without naming it is found from its operands, as its getopt reads them
(`_operands.py`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from tether.shell._operands import GRAMMARS, operands

__all__ = ["WalkSpec", "walk_of"]


@dataclass(frozen=True, slots=True)
class WalkSpec:
    """How a command walks a directory tree."""

    contents: bool
    """True if it reads the files it finds (`grep -r`), False if it lists names (`find`)."""
    hidden: bool = True
    """False if it skips hidden entries (`rg` without `--hidden`)."""
    dot: bool = True
    """True if it walks `.` without naming it (`grep -r x`, `find -name x`, `du`)."""
    skip_dirs: frozenset[str] = frozenset()
    """Directory names it skips (`grep --exclude-dir=.git`; exact names only)."""


_NAME_WALKERS = frozenset({"find", "fd", "du", "tree"})
_GREPS = frozenset({"grep", "egrep", "fgrep"})


def _short_has(arg: str, letters: str) -> bool:
    return arg.startswith("-") and not arg.startswith("--") and any(c in arg for c in letters)


def _long_is(arg: str, option: str, shortest: int) -> bool:
    """`arg` is `option` or an abbreviation of it at least `shortest` long (GNU getopt)."""
    name = arg.split("=", 1)[0]
    return len(name) >= shortest and option.startswith(name)


def _rg_hidden(args: list[str]) -> bool:
    return any(
        _long_is(a, "--hidden", 5)
        or _long_is(a, "--unrestricted", 4)
        or (_short_has(a, ".") or (a[:2] == "-u" and a.count("u") >= 2 and "-" not in a[1:]))
        for a in args
    )


def walk_of(name: str | None, words: Sequence[str | None]) -> WalkSpec | None:
    """How a read-only command walks directories (`grep -r`, `rg`, `ls -R`), or `None`.

    Over-approximate on purpose: a pattern that happens to spell `-r` makes a walk too.
    """
    args = [w for w in words[1:] if w is not None]
    if name is None:
        return None
    if name in _NAME_WALKERS:
        return WalkSpec(contents=False, dot=_walks_dot(name, words))
    if name == "rg":
        return WalkSpec(contents=True, hidden=_rg_hidden(args), dot=_walks_dot(name, words))
    if name in _GREPS and any(
        _short_has(a, "rR")
        or _long_is(a, "--recursive", 4)
        or _long_is(a, "--dereference-recursive", 5)
        or "recurse" in a
        for a in args
    ):
        return WalkSpec(contents=True, dot=_walks_dot(name, words), skip_dirs=_excluded(args))
    if name == "diff" and any(_short_has(a, "r") or _long_is(a, "--recursive", 4) for a in args):
        return WalkSpec(contents=True, dot=_walks_dot(name, words))
    if name == "ls" and any(_short_has(a, "R") or _long_is(a, "--recursive", 4) for a in args):
        return WalkSpec(contents=False, dot=_walks_dot(name, words))
    if name == "git" and "--no-index" in args:
        return WalkSpec(contents=True, dot=False)  # `git diff --no-index a b` reads both
    return None


def _excluded(args: list[str]) -> frozenset[str]:
    """The directory names `grep --exclude-dir` skips, when given as exact names.

    A glob (`--exclude-dir='.g*'`) is not modelled: the walk then looks at more than grep
    reads, never less.
    """
    names: list[str] = []
    for arg, after in zip(args, [*args[1:], ""], strict=True):
        value = arg.removeprefix("--exclude-dir=") if arg.startswith("--exclude-dir=") else None
        if arg == "--exclude-dir":
            value = after
        if value and not any(c in value for c in "*?[\\/"):
            names.append(value)
    return frozenset(names)


_FIND_LEADING = re.compile(r"-[HLP]+|-O\d*")


def _find_starts(args: list[str]) -> bool:
    """Whether `find` is given a start point (else it walks `.`)."""
    index = 0
    while index < len(args):
        arg = args[index]
        if arg == "-D":
            index += 2
            continue
        if arg == "--":
            index += 1
            break
        if not _FIND_LEADING.fullmatch(arg):
            break
        index += 1
    return index < len(args) and not args[index].startswith(("-", "(", "!", ")", ","))


def _walks_dot(name: str, words: Sequence[str | None]) -> bool:
    """Whether a walker reads `.` besides the operands it is given."""
    filled = [w if w is not None else "*" for w in words]  # a glob is an operand
    if name == "find":
        return not _find_starts(filled[1:])
    grammar = GRAMMARS.get(name)
    return grammar is None or operands(filled, grammar) is None
