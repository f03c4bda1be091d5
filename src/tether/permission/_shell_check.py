"""The whole permission decision for one shell command."""

from __future__ import annotations

from dataclasses import dataclass, field

from tether.permission._paths import (
    FileAccess,
    ResolvedPath,
    decide_path_access,
    resolve_dir,
    restricting_rule,
    sensitive_decision,
)
from tether.permission._resolve import cached_normpath
from tether.permission._shell_parse import (
    ShellAnalysis,
    ShellCommand,
    ShellRedirect,
    analyze_command,
)
from tether.permission._shell_paths import expand_glob, possible_dirs
from tether.permission._shell_rules import match_part, match_shell_rule
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

__all__ = ["check_shell_command", "is_read_only_command"]

_TOOL = "Bash"
_EDIT_IN_ACCEPT_EDITS = frozenset({"mkdir", "touch"})
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin"})


_ACCESSES: dict[str, tuple[FileAccess, ...]] = {
    "read": ("read",),
    "write": ("write",),
    "readwrite": ("read", "write"),
}
_ALLOWED = PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="every part is allowed")


@dataclass(slots=True)
class _Verdict:
    """Collects what each part of a command needs; the worst part decides."""

    deny: PermissionDecision | None = None
    asks: list[str] = field(default_factory=list)
    changes: bool = False
    safety: bool = False
    rule: PermissionRule | None = None
    suggestions: list[PermissionRule] = field(default_factory=list)

    def ask(self, reason: str, *, changes: bool = False) -> None:
        if reason not in self.asks:
            self.asks.append(reason)
        self.changes = self.changes or changes

    def take(self, decision: PermissionDecision) -> None:
        if decision.behavior is PermissionBehavior.DENY:
            self.deny = self.deny or decision
        elif decision.behavior is PermissionBehavior.ASK:
            self.ask(decision.reason)
            self.safety = self.safety or decision.safety_check
            self.rule = self.rule or decision.rule
            self.suggest(decision.suggested_rules)

    def suggest(self, rules: list[PermissionRule]) -> None:
        self.suggestions.extend(r for r in rules if r not in self.suggestions)

    def decision(self, mode: PermissionMode) -> PermissionDecision:
        if self.deny is not None:
            return self.deny
        if not self.asks:
            return _ALLOWED
        reason = "; ".join(self.asks[:3]) + (
            f" (and {len(self.asks) - 3} more)" if len(self.asks) > 3 else ""
        )
        if mode is PermissionMode.DONT_ASK:
            return PermissionDecision(
                behavior=PermissionBehavior.DENY,
                reason=f"{reason} (denied: nobody can confirm in dont_ask mode)",
                rule=self.rule,
            )
        if mode is PermissionMode.EXPLORE and self.changes:
            return PermissionDecision(
                behavior=PermissionBehavior.DENY,
                reason=f"{reason} (denied: the session is in explore (read-only) mode)",
            )
        return PermissionDecision(
            behavior=PermissionBehavior.ASK,
            reason=reason,
            rule=self.rule,
            suggested_rules=[] if self.rule is not None else list(self.suggestions),
            safety_check=self.safety,
        )


def _bash_rules(command: str, context: PermissionContext, cwd: str, verdict: _Verdict) -> None:
    for rule in context.deny_rules:
        if rule.tool_name == _TOOL and match_shell_rule(rule, command, cwd=cwd):
            verdict.deny = PermissionDecision(
                behavior=PermissionBehavior.DENY, reason=f"denied by rule `{rule}`", rule=rule
            )
            return
    for rule in context.ask_rules:
        if rule.tool_name == _TOOL and match_shell_rule(rule, command, cwd=cwd):
            verdict.ask(f"rule `{rule}` asks")
            verdict.rule = verdict.rule or rule


@dataclass(slots=True)
class _Env:
    """What every part of one decision shares."""

    context: PermissionContext
    dirs: list[str] | None
    memo: dict[str, ResolvedPath] = field(default_factory=dict)
    path_rules: bool = False
    """True if any deny/ask rule of a file tool exists (glued option values are checked)."""
    decided: dict[tuple[str, str, str, str], PermissionDecision] = field(default_factory=dict)

    def path(self, tool: str, path: str, access: FileAccess, cwd: str) -> PermissionDecision:
        """The file decision for one path, computed once per command decision."""
        key = (tool, path, access, cwd)
        found = self.decided.get(key)
        if found is None:
            found = decide_path_access(tool, path, access, self.context, cwd, self.memo)
            self.decided[key] = found
        return found


def _check_paths(
    part: ShellCommand, access: FileAccess, env: _Env, verdict: _Verdict, *, full: bool
) -> None:
    """Check a part's path arguments: all rules and work dirs if `full`, else only restrictions."""
    assert env.dirs is not None
    args = part.args
    tool = "Read" if access == "read" else "Edit"
    paths = list(args.paths)
    if env.path_rules:
        paths.extend(args.weak)
    if full:
        if args.unknown:
            verdict.ask(f"`{part.text[:80]}` has arguments computed at run time")
        paths.append(".")
    for cwd in env.dirs:
        if full and cached_normpath(cwd) not in env.memo:
            env.memo[cached_normpath(cwd)] = resolve_dir(cwd)
        candidates = list(paths)
        for pattern in args.globs:
            matches = expand_glob(pattern, cwd)
            if matches is None:
                verdict.ask(f"can't tell which files `{pattern}` names")
            else:
                candidates.extend(matches)
        for path in candidates:
            if full:
                verdict.take(env.path(tool, path, access, cwd))
                continue
            if env.path_rules:
                restricted = restricting_rule(tool, path, access, env.context, cwd, env.memo)
                if restricted is not None:
                    verdict.take(restricted)
                    continue
            sensitive = sensitive_decision(tool, path, access, env.context, cwd, env.memo)
            if sensitive is not None:
                verdict.take(sensitive)


def _allowed_by_rule(part: ShellCommand, context: PermissionContext) -> PermissionRule | None:
    for rule in context.allow_rules:
        if rule.tool_name != _TOOL or rule.rule_content is None:
            continue
        if match_part(rule.rule_content, part, PermissionBehavior.ALLOW):
            return rule
    return None


def _judge(part: ShellCommand, env: _Env, verdict: _Verdict) -> None:
    if env.dirs is None:
        verdict.ask("a `cd` goes to a directory that can't be known before running")
        return
    if part.problems:
        verdict.ask(f"`{part.text[:80]}`: {part.problems[0]}", changes=True)
        _check_paths(part, "write", env, verdict, full=False)
        return
    if _allowed_by_rule(part, env.context) is not None:
        _check_paths(part, "write", env, verdict, full=False)
        return
    if part.read_only:
        if part.reads_paths:
            _check_paths(part, "read", env, verdict, full=True)
        return
    if env.context.mode is PermissionMode.ACCEPT_EDITS and part.name in _EDIT_IN_ACCEPT_EDITS:
        _check_paths(part, "write", env, verdict, full=True)
        return
    verdict.ask(f"`{part.text[:80]}` may change things", changes=True)
    _check_paths(part, "write", env, verdict, full=False)
    if part.suggestion is not None and not part.nested:
        verdict.suggest(
            [PermissionRule(tool_name=_TOOL, rule_content=part.suggestion, source="session")]
        )


def _judge_redirect(redirect: ShellRedirect, env: _Env, verdict: _Verdict) -> None:
    target = redirect.target
    if target.value in _HARMLESS_TARGETS:
        return
    if env.dirs is None or not target.static or target.value is None:
        verdict.ask(
            f"the redirect `{redirect.operator} {target.text}` has a target computed at run time",
            changes=True,
        )
        return
    accesses: tuple[FileAccess, ...] = _ACCESSES[redirect.access]
    for cwd in env.dirs:
        for access in accesses:
            tool = "Read" if access == "read" else "Edit"
            decision = env.path(tool, target.value, access, cwd)
            if decision.behavior is not PermissionBehavior.ALLOW and access == "write":
                verdict.changes = True
            verdict.take(decision)


def _has_path_rules(context: PermissionContext) -> bool:
    return any(
        r.tool_name != _TOOL and r.rule_content is not None
        for r in (*context.deny_rules, *context.ask_rules)
    )


def check_shell_command(
    command: str, context: PermissionContext, *, cwd: str
) -> PermissionDecision:
    """Decide a shell command: every simple command of a compound on its own.

    A `Bash` deny rule matching any part denies the whole; an ask rule matching any part
    asks. Then each part must be allowed by a `Bash` allow rule, or be on the read-only list
    with its file arguments passing the Read checks (deny rules, sensitive paths, work
    dirs). Substitutions, `eval`, `bash -c`, interpreters given code, wrappers and anything
    that does not parse always ask. A redirect to a file is a write that needs write
    permission for that path; `cd` changes the directories later paths are taken from.
    Under DONT_ASK an ASK becomes DENY; under EXPLORE a part that changes things is denied.

    Args:
        command: The shell command.
        context: Mode, rules and work dirs.
        cwd: The shell's current directory.

    Returns:
        The decision, with the narrowest rule per sub-command in `suggested_rules`.
    """
    analysis = analyze_command(command)
    verdict = _Verdict()
    _bash_rules(command, context, cwd, verdict)
    if verdict.deny is not None:
        return verdict.decision(context.mode)
    for problem in analysis.problems:
        verdict.ask(f"`{command[:80]}`: {problem}", changes=True)
    env = _Env(context, possible_dirs(analysis, cwd), path_rules=_has_path_rules(context))
    for part in analysis.commands:
        _judge(part, env, verdict)
        if verdict.deny is not None:
            return verdict.decision(context.mode)
    for redirect in analysis.redirects:
        _judge_redirect(redirect, env, verdict)
    return verdict.decision(context.mode)


def is_read_only_command(command: str, *, cwd: str) -> bool:
    """Whether a command only reads: every part on the read-only list, no file writes.

    Says nothing about *which* files it reads; `check_shell_command` checks those.

    Args:
        command: The shell command.
        cwd: The shell's current directory.

    Returns:
        True if running it changes nothing.
    """
    analysis: ShellAnalysis = analyze_command(command)
    if analysis.problems or not analysis.commands:
        return False
    if not all(part.read_only and not part.nested for part in analysis.commands):
        return False
    return all(
        r.access == "read" or r.target.value in _HARMLESS_TARGETS for r in analysis.redirects
    )
