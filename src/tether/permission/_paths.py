"""Path rules: gitignore-style patterns on resolved real paths, and the file access decision.

Which rules apply to which access (see `docs/decisions/permission.md`):

- a read is governed by `Read` rules and rules of the calling tool; allow rules of
  `Edit`/`Write` also allow reading (who may change a file may see it);
- a write is governed by `Edit` and `Write` rules (each covers the other) and rules of the
  calling tool; deny and ask rules of `Read` also apply (a file you may not see you may not
  change either).
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import TYPE_CHECKING, Literal

from tether.permission._path_suggest import suggest_for_path, suggest_path_rules
from tether.permission._resolve import (
    ResolvedPath,
    inside,
    real_dir,
    resolve_dir,
    resolve_path,
    token_for,
    work_dirs,
)
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    import pathspec

__all__ = [
    "FileAccess",
    "ResolvedPath",
    "check_path_access",
    "decide_path_access",
    "match_path_rule",
    "resolve_dir",
    "resolve_path",
    "restricting_rule",
    "sensitive_decision",
    "suggest_path_rules",
    "work_dirs",
]

FileAccess = Literal["read", "write"]
"""What a call does to a path."""

_HARMLESS_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})
# Shared answers for the hot path (decisions are frozen, so sharing is safe).
_READ_INSIDE = PermissionDecision(
    behavior=PermissionBehavior.ALLOW, reason="read inside the work dir"
)
_EDIT_INSIDE = PermissionDecision(
    behavior=PermissionBehavior.ALLOW, reason="edit inside the work dir (accept_edits mode)"
)
_HARMLESS = PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="a harmless device")


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


def _pattern_matches(
    rule: PermissionRule, resolved: ResolvedPath, dirs: list[str], *, fold: bool
) -> bool:
    assert rule.rule_content is not None
    content = rule.rule_content
    home = os.path.expanduser("~") if content.startswith("~") else ""
    found = _bases(content, tuple(dirs), home)
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


def match_path_rule(
    rule: PermissionRule, path: str, context: PermissionContext, *, cwd: str
) -> bool:
    """Whether a file rule `Tool(pattern)` matches a path.

    Patterns are gitignore-style and apply to the resolved real path relative to each work
    dir (`src/**`, `*.py`, `/top-level-only`); `//abs/path/**` is absolute and `~/x/**` is
    relative to the home directory. Deny and ask rules also match the path as written and
    ignore case (so `SRC/../.ENV` tricks don't slip past); allow rules match the real path
    exactly and, for a sensitive path, only if the pattern names it (e.g. `Read(~/.ssh/**)`).

    Args:
        rule: The rule; a rule without specifier matches every path.
        path: The path the call uses, relative to `cwd` or absolute; `~` is expanded.
        context: Gives the work dirs.
        cwd: The directory relative paths are taken from.

    Returns:
        True if the rule applies to the path.
    """
    resolved = resolve_path(path, cwd)
    fold = rule.behavior is not PermissionBehavior.ALLOW
    if rule.rule_content is None:
        return fold or token_for(resolved) is None
    if not fold and not _names(rule, token_for(resolved)):
        return False
    return _pattern_matches(rule, resolved, work_dirs(context), fold=fold)


def _rule_tools(tool_name: str, access: FileAccess, behavior: PermissionBehavior) -> set[str]:
    if access == "read":
        names = {tool_name, "Read"}
        if behavior is PermissionBehavior.ALLOW:
            names |= {"Edit", "Write"}
        return names
    names = {tool_name, "Edit", "Write"}
    if behavior is not PermissionBehavior.ALLOW:
        names.add("Read")
    return names


def _first_match(
    rules: list[PermissionRule],
    tools: set[str],
    resolved: ResolvedPath,
    dirs: list[str],
    token: str | None,
) -> PermissionRule | None:
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
        if _pattern_matches(rule, resolved, dirs, fold=fold):
            return rule
    return None


def _finish(decision: PermissionDecision, mode: PermissionMode) -> PermissionDecision:
    if decision.behavior is PermissionBehavior.ASK and mode is PermissionMode.DONT_ASK:
        return decision.model_copy(
            update={
                "behavior": PermissionBehavior.DENY,
                "reason": f"{decision.reason} (denied: nobody can confirm in dont_ask mode)",
                "suggested_rules": [],
            }
        )
    return decision


def check_path_access(
    tool_name: str,
    path: str,
    access: FileAccess,
    context: PermissionContext,
    *,
    cwd: str,
) -> PermissionDecision:
    """Decide a read or write of one path, from the rules, the work dirs and the mode.

    Order: a matching deny rule → DENY; a matching ask rule → ASK; a matching allow rule →
    ALLOW; a sensitive path → ASK (even for reads and in ACCEPT_EDITS); outside the work
    dirs → ASK; a read inside → ALLOW; a write inside → ALLOW in ACCEPT_EDITS, DENY in
    EXPLORE, else ASK. Under DONT_ASK every ASK becomes DENY.

    Args:
        tool_name: The tool that uses the path (its own rules apply too).
        path: The path as the call gives it, relative to `cwd` or absolute.
        access: `"read"` or `"write"`.
        context: Mode, rules and work dirs.
        cwd: The directory relative paths are taken from.

    Returns:
        The decision, with `suggested_rules` when it asks.
    """
    return decide_path_access(tool_name, path, access, context, cwd, None)


def decide_path_access(
    tool_name: str,
    path: str,
    access: FileAccess,
    context: PermissionContext,
    cwd: str,
    memo: dict[str, ResolvedPath] | None,
) -> PermissionDecision:
    """`check_path_access` with a per-decision resolution cache."""
    if "\x00" in path:
        return PermissionDecision(
            behavior=PermissionBehavior.DENY, reason=f"{path!r} contains a NUL byte"
        )
    resolved = resolve_path(path, cwd, memo)
    if resolved.lexical in _HARMLESS_DEVICES:
        return _HARMLESS
    return _finish(_decide_path(tool_name, path, resolved, access, context), context.mode)


def _decide_path(
    tool_name: str,
    path: str,
    resolved: ResolvedPath,
    access: FileAccess,
    context: PermissionContext,
) -> PermissionDecision:
    dirs = work_dirs(context)
    token = token_for(resolved)
    restricted = _restriction(tool_name, path, resolved, access, context, dirs, token)
    if restricted is not None:
        return restricted
    allow_tools = _rule_tools(tool_name, access, PermissionBehavior.ALLOW)
    rule = _first_match(context.allow_rules, allow_tools, resolved, dirs, token)
    if rule is not None:
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW, reason=f"{path}: allowed by rule `{rule}`", rule=rule
        )
    if token is not None:
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            reason=f"{path} is sensitive ({token}); an allow rule naming it would allow it",
            safety_check=True,
        )
    if not any(inside(resolved.real, d) for d in dirs):
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            reason=f"{path} is outside the working directories ({', '.join(dirs)})",
            suggested_rules=suggest_for_path(tool_name, resolved, access, dirs),
        )
    if access == "read":
        return _READ_INSIDE
    return _writeinside(tool_name, path, resolved, context.mode, dirs)


def restricting_rule(
    tool_name: str,
    path: str,
    access: FileAccess,
    context: PermissionContext,
    cwd: str,
    memo: dict[str, ResolvedPath] | None,
) -> PermissionDecision | None:
    """Only the deny and ask rules for a path: DENY, ASK or `None` if none matches."""
    if "\x00" in path:
        return None
    resolved = resolve_path(path, cwd, memo)
    return _restriction(tool_name, path, resolved, access, context, work_dirs(context), None)


def _restriction(
    tool_name: str,
    path: str,
    resolved: ResolvedPath,
    access: FileAccess,
    context: PermissionContext,
    dirs: list[str],
    token: str | None,
) -> PermissionDecision | None:
    """DENY or ASK from the path's deny and ask rules, or `None` if none matches."""
    tools = _rule_tools(tool_name, access, PermissionBehavior.DENY)
    rule = _first_match(context.deny_rules, tools, resolved, dirs, token)
    if rule is not None:
        return PermissionDecision(
            behavior=PermissionBehavior.DENY, reason=f"{path}: denied by rule `{rule}`", rule=rule
        )
    rule = _first_match(context.ask_rules, tools, resolved, dirs, token)
    if rule is not None:
        return PermissionDecision(
            behavior=PermissionBehavior.ASK, reason=f"{path}: rule `{rule}` asks", rule=rule
        )
    return None


def sensitive_decision(
    tool_name: str,
    path: str,
    access: FileAccess,
    context: PermissionContext,
    cwd: str,
    memo: dict[str, ResolvedPath] | None,
) -> PermissionDecision | None:
    """The full decision for a sensitive path (it asks unless a rule names it), else `None`."""
    if "\x00" in path:
        return None
    if token_for(resolve_path(path, cwd, memo)) is None:
        return None
    return decide_path_access(tool_name, path, access, context, cwd, memo)


def _writeinside(
    tool_name: str, path: str, resolved: ResolvedPath, mode: PermissionMode, dirs: list[str]
) -> PermissionDecision:
    if mode is PermissionMode.ACCEPT_EDITS:
        return _EDIT_INSIDE
    if mode is PermissionMode.EXPLORE:
        return PermissionDecision(
            behavior=PermissionBehavior.DENY,
            reason=f"{path}: writing is not allowed in explore (read-only) mode",
        )
    return PermissionDecision(
        behavior=PermissionBehavior.ASK,
        reason=f"{path}: writing needs confirmation",
        suggested_rules=suggest_for_path(tool_name, resolved, "write", dirs),
    )
