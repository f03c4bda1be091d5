"""Matching `Bash(...)` rules against analysed commands, and suggesting new ones."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from tether.permission._sensitive import sensitive_token
from tether.permission._types import PermissionBehavior, PermissionRule
from tether.shell import (
    ShellAnalysis,
    ShellCommand,
    analyze_command,
    command_name,
    is_trusted_location,
    looks_through,
    possible_dirs,
)

__all__ = [
    "is_exact_rule",
    "match_part",
    "match_shell_rule",
    "shell_words",
    "suggest_shell_rules",
]

_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})
_RAW_SPLIT = re.compile(r"[;&|\n\r()`{}<>]|\$\(")
_QUOTES = str.maketrans("", "", "'\"\\")


@dataclass(frozen=True, slots=True)
class _Pattern:
    words: tuple[str, ...] | None
    """The rule's words, or `None` when it is not one plain simple command."""
    prefix: bool
    """True for `cmd args:*`."""
    raw: str
    """The specifier without `:*`."""


@lru_cache(maxsize=1024)
def _pattern(content: str) -> _Pattern:
    prefix = content.endswith(":*")
    body = (content[:-2] if prefix else content).strip()
    analysis = analyze_command(body)
    commands = analysis.commands
    if (
        not analysis.problems
        and not analysis.redirects
        and len(commands) == 1
        and all(w.static for w in commands[0].all_words)
        and commands[0].all_words
    ):
        words = tuple(w.value or "" for w in commands[0].all_words)
        return _Pattern(words=words, prefix=prefix, raw=body)
    return _Pattern(words=None, prefix=prefix, raw=" ".join(body.split()))


def is_exact_rule(content: str) -> bool:
    """Whether a `Bash` specifier is one whole command (no `:*`), not a prefix."""
    return not _pattern(content).prefix


def shell_words(content: str) -> tuple[tuple[str, ...], bool] | None:
    """A `Bash` specifier's words and whether it is a prefix; `None` if not one command."""
    pattern = _pattern(content)
    return None if pattern.words is None else (pattern.words, pattern.prefix)


def _match_words(
    pattern: tuple[str, ...], words: list[str | None], prefix: bool, loose: bool
) -> bool:
    """Word-wise match; `loose` (deny/ask) treats a run-time word as a possible match."""
    for i, expected in enumerate(pattern):
        if i >= len(words):
            return False
        word = words[i]
        if word is None:
            return loose
        if i == 0:
            got, want = command_name(word), command_name(expected)
            if loose:
                got, want = got.lower(), want.lower()
            elif not is_trusted_location(word) and word != expected:
                return False
            if got != want:
                return False
        elif word != expected:
            return False
    if prefix or len(words) == len(pattern):
        return True
    return loose and any(w is None for w in words[len(pattern) :])


def match_part(pattern_text: str, command: ShellCommand, behavior: PermissionBehavior) -> bool:
    """Whether a `Bash` specifier matches one simple command.

    Deny and ask rules match loosely: the command name without its directory and case,
    through wrappers (`sudo rm` matches `rm:*`), and a word computed at run time counts as
    a possible match. Allow rules match strictly: every word static and equal.
    """
    pattern = _pattern(pattern_text)
    if behavior is PermissionBehavior.ALLOW:
        if pattern.words is None or command.problems:
            return False
        values = [w.value if w.static else None for w in command.words]
        if any(v is None for v in values):
            return False
        return _match_words(pattern.words, values, pattern.prefix, loose=False)
    values = [w.value if w.static else None for w in command.all_words]
    if pattern.words is None:
        return pattern.raw.lower() in " ".join(command.text.split()).lower()
    if _match_words(pattern.words, values, pattern.prefix, loose=True):
        return True
    first = values[0] if values else None
    if first is not None and looks_through(command_name(first)):
        return any(
            _match_words(pattern.words, values[i:], pattern.prefix, loose=True)
            for i in range(1, len(values))
        )
    return False


def _raw_parts(command: str) -> list[list[str | None]]:
    """A crude split for commands the grammar could not parse (deny rules only)."""
    parts: list[list[str | None]] = []
    for chunk in _RAW_SPLIT.split(command):
        words: list[str | None] = [w.translate(_QUOTES) for w in chunk.split()]
        if words:
            parts.append(words)
    return parts


def _raw_matches(pattern: _Pattern, text: str) -> bool:
    if pattern.words is None:
        return pattern.raw.lower() in " ".join(text.split()).lower()
    for words in _raw_parts(text):
        if _match_words(pattern.words, words, pattern.prefix, loose=True):
            return True
        first = words[0]
        if first is not None and looks_through(command_name(first).lower()):
            for i in range(1, len(words)):
                if _match_words(pattern.words, words[i:], pattern.prefix, loose=True):
                    return True
    return False


@lru_cache(maxsize=4096)
def _loose_match(content: str, command: str) -> bool:
    """Whether a deny/ask `Bash` specifier matches any part of a command (memoised: pure)."""
    return _loose_matches(_pattern(content), analyze_command(command), content)


def _loose_matches(pattern: _Pattern, analysis: ShellAnalysis, content: str) -> bool:
    if pattern.words is None and _raw_matches(pattern, analysis.command):
        return True  # a compound rule (`curl x | sh`) is looked for in the whole text
    for command in analysis.commands:
        if match_part(content, command, PermissionBehavior.DENY):
            return True
    # Text the grammar could not parse, and here-documents (code a shell may read), get a
    # crude word split: over-matching a deny rule is the safe direction.
    if analysis.parse_error and _raw_matches(pattern, analysis.command):
        return True
    return any(_raw_matches(pattern, body) for body in analysis.heredocs)


def _has_sensitive_arg(analysis: ShellAnalysis, cwd: str) -> bool:
    dirs = possible_dirs(analysis, cwd)
    if dirs is None:
        return True
    for command in analysis.commands:
        args = command.args
        if args.globs or args.unknown:
            return True
        for path in (*args.paths, *args.weak):
            if any(sensitive_token(path, cwd=d) is not None for d in dirs):
                return True
    return False


def _strict_matches(pattern: _Pattern, analysis: ShellAnalysis, content: str, cwd: str) -> bool:
    if analysis.problems or not analysis.commands:
        return False
    if any(r.target.value not in _HARMLESS_TARGETS for r in analysis.redirects):
        return False  # a redirect is a file write or read: the file tools' rules decide it
    if pattern.words is None:
        matched = " ".join(analysis.command.split()) == pattern.raw
    else:
        matched = all(match_part(content, c, PermissionBehavior.ALLOW) for c in analysis.commands)
    return matched and not _has_sensitive_arg(analysis, cwd)


def match_shell_rule(rule: PermissionRule, command: str, *, cwd: str) -> bool:
    r"""Whether a `Bash` rule matches a command.

    A specifier is an exact command (`npm test`) or a prefix (`git diff:*`), matched word
    by word after parsing, so quoting (`'rm'`, `r\m`) and paths (`/usr/bin/rm`) don't
    matter. A deny or ask rule matches if any simple command of a compound matches (through
    `sudo`/`env`/`xargs` wrappers, `bash -c` strings and substitutions; a command name
    computed at run time counts as a possible match). An allow rule matches only if every
    simple command matches and nothing is left unanalysed: no substitution, no code given to
    an interpreter, no wrapper, no word computed at run time, no file redirect and no
    sensitive path among the arguments.

    Args:
        rule: A rule; `rule.behavior` selects any-part or every-part matching.
        command: The shell command.
        cwd: The directory the command runs in.

    Returns:
        True if the rule applies to the command.
    """
    if rule.rule_content is None:
        return True
    if rule.behavior is PermissionBehavior.ALLOW:
        analysis = analyze_command(command)
        return _strict_matches(_pattern(rule.rule_content), analysis, rule.rule_content, cwd)
    return _loose_match(rule.rule_content, command)


def suggest_shell_rules(command: str, *, cwd: str) -> list[PermissionRule]:
    """The narrowest useful `Bash` rule for each simple command that is not read-only.

    E.g. `git commit -m x && npm run build` → `Bash(git commit:*)`, `Bash(npm run build:*)`.
    Interpreters and shells never get a bare prefix (`python:*`, `bash:*`); commands that
    no rule could allow (code strings, wrappers, substitutions) get none.

    Args:
        command: The shell command.
        cwd: The directory the command runs in.

    Returns:
        Rules to offer the user, without duplicates.
    """
    analysis = analyze_command(command)
    rules: list[PermissionRule] = []
    for part in analysis.commands:
        if part.nested or part.read_only or part.problems or part.suggestion is None:
            continue
        rule = PermissionRule(tool_name="Bash", rule_content=part.suggestion, source="session")
        if rule not in rules:
            rules.append(rule)
    return rules
