"""Path rules compiled once per rule set, and the memoised rule verdict for a resolved path.

A `RuleSet` is built from the rules of a context (cached by their values, so a context
whose rules change gets another one). What is memoised is pure string work: which rule
matches a path whose real path the caller has just resolved, given the work dirs' real
paths. The file system is asked nothing here, except `isdir` for directory patterns
(`build/`), and verdicts of a rule set with one of those are never memoised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from tether.permission._resolve import ResolvedPath, inside, real_dir, token_of, work_dir_tuple
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    import pathspec

__all__ = [
    "PathScope",
    "PathVerdict",
    "RuleSet",
    "first_match",
    "path_scope",
    "pattern_matches",
    "rule_set",
]

_BASH = "Bash"
_Access = Literal["read", "write"]
VerdictKind = Literal["deny", "ask", "allow", "sensitive", "outside", "inside"]


@lru_cache(maxsize=2048)
def _spec(pattern: str) -> pathspec.GitIgnoreSpec:
    import pathspec

    return pathspec.GitIgnoreSpec.from_lines([pattern])


@lru_cache(maxsize=2048)
def _bases(pattern: str, dirs: tuple[str, ...], home: str) -> tuple[tuple[str, ...], str] | None:
    """The directories a pattern is relative to, and the pattern made relative to them."""
    if pattern.startswith("//"):
        return ("/",), "/" + pattern[2:].lstrip("/")
    if pattern == "~" or pattern.startswith("~/"):
        return (real_dir(home),), "/" + pattern[2:]
    if pattern.startswith("./"):
        pattern = "/" + pattern[2:]
    ups = 0
    while pattern.startswith("../"):
        ups, pattern = ups + 1, pattern[3:]
    if ups:
        return tuple(os.path.normpath(os.path.join(d, *[".."] * ups)) for d in dirs), "/" + pattern
    if "/../" in pattern or pattern.endswith("/.."):
        return None  # a `..` in the middle can't be matched soundly; the rule never matches
    return dirs, pattern


def _names(rule: PermissionRule, token: str | None) -> bool:
    return token is None or (
        rule.rule_content is not None and token.lower() in rule.rule_content.lower()
    )


def pattern_matches(
    rule: PermissionRule,
    resolved: ResolvedPath,
    dirs: tuple[str, ...],
    *,
    fold: bool,
    home: str | None = None,
) -> bool:
    """Whether a rule's gitignore pattern matches a resolved path (see `match_path_rule`).

    `home` is the home directory for `~` patterns (`os.path.expanduser("~")` if `None`).
    """
    assert rule.rule_content is not None
    content = rule.rule_content
    if not content.startswith("~"):
        home = ""
    elif home is None:
        home = os.path.expanduser("~")
    found = _bases(content, dirs, home)
    if found is None:
        return False
    bases, pattern = found
    if fold:
        pattern = pattern.lower()
    spec = _spec(pattern)
    # Deny/ask rules look at the path as written and as it really is; allow rules only at
    # the real path, so a symlink or `..` can't carry an allowed name out of its directory.
    paths = resolved.candidates() if fold else (resolved.real,)
    for candidate in paths:
        for base in bases:
            if not inside(candidate, base) or candidate == base:
                continue
            rel = candidate[len(base) :].lstrip("/")
            if pattern.endswith("/") and os.path.isdir(candidate):
                rel += "/"
            if spec.match_file(rel.lower() if fold else rel):
                return True
    return False


@lru_cache(maxsize=256)
def _rule_tools(tool_name: str, access: _Access, allow: bool) -> frozenset[str]:
    if access == "read":
        return frozenset({tool_name, "Read", "Edit", "Write"} if allow else {tool_name, "Read"})
    if allow:
        return frozenset({tool_name, "Edit", "Write"})
    return frozenset({tool_name, "Edit", "Write", "Read"})


def first_match(
    rules: tuple[PermissionRule, ...],
    tools: frozenset[str],
    resolved: ResolvedPath,
    dirs: tuple[str, ...],
    token: str | None,
    home: str | None = None,
) -> PermissionRule | None:
    """The first rule of `tools` that matches the path (allow rules must name a token)."""
    for rule in rules:
        if rule.tool_name not in tools:
            continue
        fold = rule.behavior is not PermissionBehavior.ALLOW
        if rule.rule_content is None:
            if fold or token is None:
                return rule
            continue
        if not fold and not _names(rule, token):
            continue
        if pattern_matches(rule, resolved, dirs, fold=fold, home=home):
            return rule
    return None


@dataclass(frozen=True, slots=True)
class PathVerdict:
    """What the rules and work dirs say about one resolved path (mode not applied)."""

    kind: VerdictKind
    """A deny/ask/allow rule matched; sensitive; outside the work dirs; or inside them."""
    rule: PermissionRule | None = None
    """The rule that matched, for `deny`, `ask` and `allow`."""
    token: str | None = None
    """The path's sensitive token, if any (whatever the kind)."""


def _verdict(scope: PathScope, tool: str, access: _Access, lexical: str, real: str) -> PathVerdict:
    rules, dirs, home = scope.rules, scope.dirs, scope.home
    resolved = ResolvedPath(lexical, real)
    token = token_of(lexical, real)
    tools = _rule_tools(tool, access, False)
    rule = first_match(rules.deny, tools, resolved, dirs, token, home)
    if rule is not None:
        return PathVerdict("deny", rule, token)
    rule = first_match(rules.ask, tools, resolved, dirs, token, home)
    if rule is not None:
        return PathVerdict("ask", rule, token)
    allow_tools = _rule_tools(tool, access, True)
    rule = first_match(rules.allow, allow_tools, resolved, dirs, token, home)
    if rule is not None:
        return PathVerdict("allow", rule, token)
    if token is not None:
        return PathVerdict("sensitive", None, token)
    if not any(inside(real, d) for d in dirs):
        return PathVerdict("outside")
    return PathVerdict("inside")


_memo_verdict = lru_cache(maxsize=8192)(_verdict)


class RuleSet:
    """A context's rules, with what is derived from them once (compare by identity)."""

    __slots__ = (
        "allow",
        "ask",
        "bash_allow",
        "bash_ask",
        "bash_deny",
        "deny",
        "memoise",
        "path_rules",
        "pure_bash",
        "uses_home",
    )

    def __init__(
        self,
        deny: tuple[PermissionRule, ...],
        ask: tuple[PermissionRule, ...],
        allow: tuple[PermissionRule, ...],
    ) -> None:
        self.deny, self.ask, self.allow = deny, ask, allow
        self.bash_deny = tuple(r for r in deny if r.tool_name == _BASH)
        self.bash_ask = tuple(r for r in ask if r.tool_name == _BASH)
        self.bash_allow = tuple(
            r for r in allow if r.tool_name == _BASH and r.rule_content is not None
        )
        self.path_rules = any(
            r.tool_name != _BASH and r.rule_content is not None for r in (*deny, *ask)
        )
        """True if a file tool has a deny/ask rule with a pattern."""
        self.memoise = not any(_is_dir_pattern(r) for r in (*deny, *ask, *allow))
        """False if a directory pattern (`build/`) makes matching ask the file system."""
        self.pure_bash = not any(
            r.behavior is PermissionBehavior.ALLOW for r in (*self.bash_deny, *self.bash_ask)
        )
        """False if a deny/ask list holds an ALLOW rule (matched strictly, on the disk)."""
        self.uses_home = any((r.rule_content or "").startswith("~") for r in (*deny, *ask, *allow))
        """True if a pattern is relative to the home directory (`~/.aws/**`)."""


@dataclass(frozen=True, slots=True, eq=False)
class PathScope:
    """Everything a path decision needs besides the path: rules, work dirs, home and mode.

    Scopes are cached (`path_scope`) and compare by identity, so a memoised verdict is
    found again by the next decision with the same rules, dirs, home and mode.
    """

    rules: RuleSet
    dirs: tuple[str, ...]
    """The work dirs' real paths."""
    home: str
    """The home directory if a pattern needs it (`~/...`), else empty."""
    mode: PermissionMode

    def verdict(self, tool: str, access: _Access, resolved: ResolvedPath) -> PathVerdict:
        """The rule verdict for a path resolved in this decision."""
        if self.rules.memoise:
            return _memo_verdict(self, tool, access, resolved.lexical, resolved.real)
        return _verdict(self, tool, access, resolved.lexical, resolved.real)


def _is_dir_pattern(rule: PermissionRule) -> bool:
    # Only the pattern part of `_bases` matters, and it does not depend on dirs or home.
    found = None if rule.rule_content is None else _bases(rule.rule_content, (), "")
    return found is not None and found[1].endswith("/")


_Key = tuple[tuple[PermissionRule, ...], tuple[PermissionRule, ...], tuple[PermissionRule, ...]]


@lru_cache(maxsize=64)
def _rule_set(key: _Key) -> RuleSet:
    return RuleSet(*key)


_last: tuple[_Key, RuleSet] | None = None


def rule_set(context: PermissionContext) -> RuleSet:
    """The compiled rules of a context, cached by the rules' values."""
    global _last
    key: _Key = (tuple(context.deny_rules), tuple(context.ask_rules), tuple(context.allow_rules))
    last = _last
    if last is not None and last[0] == key:  # rules compare by identity first: fast
        return last[1]
    rules = _rule_set(key)
    _last = (key, rules)
    return rules


def path_scope(context: PermissionContext, rules: RuleSet | None = None) -> PathScope:
    """The rules (`rule_set(context)` unless given), work dirs and mode of a context."""
    if rules is None:
        rules = rule_set(context)
    # `~` patterns are relative to `$HOME` as it is now (part of the memoised verdicts' key).
    home = os.path.expanduser("~") if rules.uses_home else ""
    return _scope(rules, work_dir_tuple(context), home, context.mode)


@lru_cache(maxsize=64)
def _scope(rules: RuleSet, dirs: tuple[str, ...], home: str, mode: PermissionMode) -> PathScope:
    return PathScope(rules, dirs, home, mode)
