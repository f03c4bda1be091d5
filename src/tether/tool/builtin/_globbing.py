"""Glob patterns as regular expressions, and a directory walk that honours .gitignore."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

__all__ = ["compile_glob", "literal_prefix", "walk_files"]

_MAGIC = re.compile(r"[*?\[{]")


def _expand_braces(pattern: str) -> list[str]:
    """`a/{b,c}.py` → `a/b.py`, `a/c.py` (nested braces expand recursively)."""
    depth, start = 0, -1
    for i, ch in enumerate(pattern):
        if ch == "{":
            if depth == 0:
                start = i
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
            if depth == 0:
                options, level, part = [], 0, ""
                for c in pattern[start + 1 : i]:
                    if c == "," and level == 0:
                        options.append(part)
                        part = ""
                        continue
                    level += (c == "{") - (c == "}")
                    part += c
                options.append(part)
                head, tail = pattern[:start], pattern[i + 1 :]
                return [x for o in options for x in _expand_braces(head + o + tail)]
    return [pattern]


def _translate(pattern: str) -> str:
    out, i = [], 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        elif pattern[i] == "[" and (end := pattern.find("]", i + 2)) != -1:
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append(f"[{body.replace(chr(92), chr(92) * 2)}]")
            i = end + 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return "".join(out)


def compile_glob(pattern: str) -> re.Pattern[str]:
    """A regex matching `/`-separated relative paths the way shell globs with `**` do."""
    alternatives = [_translate(p) for p in _expand_braces(pattern)]
    return re.compile("^(?:" + "|".join(alternatives) + ")$")


def literal_prefix(pattern: str) -> tuple[str, str]:
    """Split `src/app/**/*.py` into the plain directory `src/app` and the rest `**/*.py`."""
    parts = pattern.split("/")
    fixed: list[str] = []
    for part in parts[:-1]:
        if _MAGIC.search(part):
            break
        fixed.append(part)
    return "/".join(fixed), "/".join(parts[len(fixed) :])


@dataclass(frozen=True, slots=True)
class _Ignore:
    prefix: str
    """The directory of the .gitignore, with a trailing `/`."""
    spec: pathspec.GitIgnoreSpec

    def ignores(self, path: str, is_dir: bool) -> bool:
        rel = path[len(self.prefix) :]
        return self.spec.match_file(rel + "/" if is_dir else rel)


def _load_ignore(directory: str) -> _Ignore | None:
    try:
        with open(os.path.join(directory, ".gitignore"), encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    import pathspec

    return _Ignore(directory.rstrip("/") + "/", pathspec.GitIgnoreSpec.from_lines(lines))


def _ancestors(path: str) -> list[str]:
    found: list[str] = []
    current = os.path.dirname(path)
    while current and current not in found:
        found.append(current)
        current = os.path.dirname(current)
    return found[::-1]


def walk_files(
    root: str, *, gitignore: bool, max_depth: int | None = None
) -> Iterator[os.DirEntry[str]]:
    """Yield the files under `root`; skips `.git` and, if asked, ignored paths.

    Each directory's `.gitignore` applies to its subtree, as in git. Blocking: run it in
    a worker thread.
    """
    inherited: tuple[_Ignore, ...] = ()
    if gitignore:
        # Like git and ripgrep, ignore files of the directories above apply too.
        inherited = tuple(i for p in _ancestors(root) if (i := _load_ignore(p)) is not None)
    stack: list[tuple[str, tuple[_Ignore, ...], int]] = [(root, inherited, 0)]
    while stack:
        directory, ignores, depth = stack.pop()
        if gitignore and (own := _load_ignore(directory)) is not None:
            ignores = (*ignores, own)
        try:
            entries = list(os.scandir(directory))
        except OSError:
            continue
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
                if is_dir and entry.name == ".git":
                    continue
                if any(rule.ignores(entry.path, is_dir) for rule in ignores):
                    continue
                if is_dir:
                    if max_depth is None or depth + 1 < max_depth:
                        stack.append((entry.path, ignores, depth + 1))
                elif entry.is_file():
                    yield entry
            except OSError:
                continue
