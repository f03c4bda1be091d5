"""Which words of a simple command may name files it uses."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tether.shell._words import ShellWord, tilde_known_when_run

__all__ = ["PathArgs", "path_args"]


@dataclass(frozen=True, slots=True)
class PathArgs:
    """The words of a command that may name files (an over-approximation)."""

    paths: tuple[str, ...] = ()
    """Static candidates: each argument, and the part after `=` (`--file=x`, `if=x`)."""
    weak: tuple[str, ...] = ()
    """Values glued to short options (`-fx`), which may or may not be paths."""
    globs: tuple[str, ...] = ()
    """Arguments with unquoted glob characters (`*.py`), in Python's `glob` syntax."""
    unknown: bool = False
    """True if some argument is computed at run time, so its files can't be checked."""


def _plain(value: str, tilde: bool) -> str | None:
    if not value or value == "-":
        return None
    if value.startswith("~") and not tilde:
        return "./" + value  # a quoted `~` is a plain name in the current directory
    return value


def _looks_like_path(value: str) -> bool:
    return "/" in value or value.startswith(("~", "."))


def _add(target: list[str], value: str | None) -> None:
    if value is not None and value not in target:
        target.append(value)


def _glued(value: str, paths: list[str], weak: list[str]) -> None:
    """`-f/etc/shadow`, `-rf~/.ssh/x`: the value of a short option may be glued on."""
    glued = value[2:]
    _add(paths if _looks_like_path(glued) else weak, _plain(glued, False))
    for i, char in enumerate(value[2:], start=2):
        if char in "/~." and i > 2:
            _add(paths, _plain(value[i:], char == "~"))
            break


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _positional(value: str, tilde: bool, paths: list[str], git: bool) -> bool:
    """Add the paths a positional argument may name; False if one is known only when run."""
    _add(paths, _plain(value, tilde))
    if "=" in value:
        name, rest = value.split("=", 1)
        _add(paths, _plain(rest, False))  # `if=/dev/sda`, `--x=y` after --
        if rest.startswith("~") and _NAME.fullmatch(name):
            # Bash expands the `~` of an argument shaped like an assignment (`if=~/x`).
            if tilde_known_when_run(rest):
                return False
            _add(paths, rest)
    if git and ":" in value:
        _add(paths, _plain(value.split(":", 1)[1], False))  # `git show HEAD:secret.txt`
    return True


def path_args(words: tuple[ShellWord, ...], *, git: bool = False) -> PathArgs:
    """Every argument (all words after the first) that might be a path the command uses.

    A word starting with `-` may be a file as well: after `--`, and right after an option,
    whose value it may be (`grep -f -k x` reads the file `-k`; GNU getopt hands the next
    word to a value-taking option whatever it looks like). Such words are taken both ways.
    """
    paths: list[str] = []
    weak: list[str] = []
    globs: list[str] = []
    unknown = False
    options_done = False
    may_be_value = False  # the word before was an option that may take this one
    subcommand_pending = git  # `git status`: the subcommand is not a path
    for word in words[1:]:
        value = word.value
        after_option, may_be_value = may_be_value, False
        if value is None:
            unknown = True
        elif word.glob:
            if word.pattern is None:
                unknown = True  # a glob Python's `glob` can't be trusted to expand alike
            else:
                globs.append(word.pattern)
        elif not value.startswith("-") or value == "-":
            if subcommand_pending and not after_option:
                subcommand_pending = False
            elif not _positional(value, word.tilde, paths, git):
                unknown = True
        elif value == "--":
            options_done = True
        else:
            if (options_done or after_option) and not _positional(value, word.tilde, paths, git):
                unknown = True
            may_be_value = _option_paths(value, paths, weak)
    return PathArgs(paths=tuple(paths), weak=tuple(weak), globs=tuple(globs), unknown=unknown)


def _option_paths(value: str, paths: list[str], weak: list[str]) -> bool:
    """Add the paths glued to an option; True if it may take the next word as its value."""
    if value.startswith("--"):
        if "=" in value:
            _add(paths, _plain(value.split("=", 1)[1], False))
            return False
        return True
    if len(value) > 2:
        _glued(value, paths, weak)
    return True
