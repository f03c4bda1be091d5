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
import stat
from typing import Literal

from tether.permission._path_rules import PathScope, PathVerdict, path_scope, pattern_matches
from tether.permission._path_suggest import suggest_for_path, suggest_path_rules
from tether.permission._resolve import (
    ResolvedPath,
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

__all__ = [
    "FileAccess",
    "ResolvedPath",
    "check_path_access",
    "decide_path_access",
    "hard_linked",
    "match_path_rule",
    "resolve_dir",
    "resolve_path",
    "restriction",
    "path_scope",
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
    token = token_for(resolved)
    if rule.rule_content is None:
        return fold or token is None
    if not fold and not (token is None or token.lower() in rule.rule_content.lower()):
        return False
    return pattern_matches(rule, resolved, tuple(work_dirs(context)), fold=fold)


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
    return decide_path_access(tool_name, path, access, path_scope(context), cwd, None)


def decide_path_access(
    tool_name: str,
    path: str,
    access: FileAccess,
    scope: PathScope,
    cwd: str,
    memo: dict[str, ResolvedPath] | None,
) -> PermissionDecision:
    """`check_path_access` on compiled rules, with a per-decision resolution cache."""
    if "\x00" in path:
        return PermissionDecision(
            behavior=PermissionBehavior.DENY, reason=f"{path!r} contains a NUL byte"
        )
    resolved = resolve_path(path, cwd, memo)
    if resolved.lexical in _HARMLESS_DEVICES:
        return _HARMLESS
    verdict = scope.verdict(tool_name, access, resolved)
    if verdict.kind == "inside":
        if hard_linked(resolved):
            return _finish(_hard_link(tool_name, path, resolved, access, scope), scope.mode)
        if access == "read":
            return _READ_INSIDE  # the common answer, without the general path below
    return _finish(_decision(tool_name, path, resolved, access, scope, verdict), scope.mode)


def hard_linked(resolved: ResolvedPath) -> bool:
    """Whether a path is a regular file with more than one hard link.

    Its other names may be anywhere on the file system (`~/.aws/credentials`), so it is
    treated as possibly outside the work dirs: reading it asks, and so does writing it,
    which changes every name (tools write such a file in place). The count the
    resolution saw is used when there is one (no further system call).
    """
    if resolved.links is not None:
        return resolved.links > 1
    try:
        st = os.stat(resolved.real)
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_nlink > 1


def _hard_link(
    tool_name: str, path: str, resolved: ResolvedPath, access: FileAccess, scope: PathScope
) -> PermissionDecision:
    reason = f"{path} has {_links(resolved.real)} hard links; another may be outside the working directories"
    if access == "write" and scope.mode is PermissionMode.EXPLORE:
        return PermissionDecision(
            behavior=PermissionBehavior.DENY,
            reason=f"{reason}; writing is not allowed in explore (read-only) mode",
        )
    return PermissionDecision(
        behavior=PermissionBehavior.ASK,
        reason=f"{reason} (an allow rule naming it would allow it)",
        suggested_rules=suggest_for_path(tool_name, resolved, access, list(scope.dirs)),
        safety_check=True,
    )


def _links(real: str) -> int:
    try:
        return os.stat(real).st_nlink
    except OSError:
        return 2


def _decision(
    tool_name: str,
    path: str,
    resolved: ResolvedPath,
    access: FileAccess,
    scope: PathScope,
    verdict: PathVerdict,
) -> PermissionDecision:
    kind = verdict.kind
    if kind == "inside":
        if access == "read":
            return _READ_INSIDE
        return _write_inside(tool_name, path, resolved, scope.mode, scope.dirs)
    restricted = _restricted(path, verdict)
    if restricted is not None:
        return restricted
    if kind == "allow":
        return PermissionDecision(
            behavior=PermissionBehavior.ALLOW,
            reason=f"{path}: allowed by rule `{verdict.rule}`",
            rule=verdict.rule,
        )
    if kind == "sensitive":
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            reason=f"{path} is sensitive ({verdict.token}); an allow rule naming it would allow it",
            safety_check=True,
        )
    return PermissionDecision(
        behavior=PermissionBehavior.ASK,
        reason=f"{path} is outside the working directories ({', '.join(scope.dirs)})",
        suggested_rules=suggest_for_path(tool_name, resolved, access, list(scope.dirs)),
    )


def _restricted(path: str, verdict: PathVerdict) -> PermissionDecision | None:
    """DENY or ASK from the path's deny and ask rules, or `None` if none matches."""
    if verdict.kind == "deny":
        return PermissionDecision(
            behavior=PermissionBehavior.DENY,
            reason=f"{path}: denied by rule `{verdict.rule}`",
            rule=verdict.rule,
        )
    if verdict.kind == "ask":
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            reason=f"{path}: rule `{verdict.rule}` asks",
            rule=verdict.rule,
        )
    return None


def restriction(
    tool_name: str,
    path: str,
    access: FileAccess,
    scope: PathScope,
    cwd: str,
    memo: dict[str, ResolvedPath] | None,
) -> PermissionDecision | None:
    """What limits a call that is otherwise allowed from using a path, or `None`.

    With path rules, a matching deny or ask rule (DENY or ASK, the mode not applied); then
    a sensitive path gets its full decision (it asks unless an allow rule names it).
    """
    if "\x00" in path:
        return None
    resolved = resolve_path(path, cwd, memo)
    verdict = scope.verdict(tool_name, access, resolved)
    if scope.rules.path_rules:
        restricted = _restricted(path, verdict)
        if restricted is not None:
            return restricted
    if access == "read" and verdict.kind == "inside" and hard_linked(resolved):
        return _finish(_hard_link(tool_name, path, resolved, access, scope), scope.mode)
    if verdict.token is None:
        return None
    if resolved.lexical in _HARMLESS_DEVICES:
        return _HARMLESS
    return _finish(_decision(tool_name, path, resolved, access, scope, verdict), scope.mode)


def _write_inside(
    tool_name: str,
    path: str,
    resolved: ResolvedPath,
    mode: PermissionMode,
    dirs: tuple[str, ...],
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
        suggested_rules=suggest_for_path(tool_name, resolved, "write", list(dirs)),
    )
