"""The whole permission decision for one shell command."""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache

from tether.permission._path_rules import PathScope, RuleSet, path_scope, rule_set
from tether.permission._paths import FileAccess, ResolvedPath, decide_path_access, restriction
from tether.permission._resolve import cached_normpath, resolve_dir, resolve_fresh, resolve_path
from tether.permission._shell_hazards import check_ruled, config_problem
from tether.permission._shell_plan import shell_plan
from tether.permission._shell_rules import match_shell_rule, shell_words
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)
from tether.shell import (
    Judge,
    ShellAnalysis,
    ShellCommand,
    ShellRedirect,
    WalkSpec,
    analyze_command,
    expand_glob,
    git_config_problem,
    possible_dirs,
    walk_problem,
)

__all__ = ["check_shell_command", "is_read_only_command", "match_allow_rule"]

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


@dataclass(slots=True)
class _Env:
    """What every part of one decision shares."""

    context: PermissionContext
    rules: RuleSet
    dirs: list[str] | None
    """The directories the command may run in; `None` if one can't be known."""
    memo: dict[str, ResolvedPath] = field(default_factory=dict)
    decided: dict[tuple[str, str, str, str], PermissionDecision] = field(default_factory=dict)
    git_checked: bool = False
    fresh: set[str] = field(default_factory=set)
    """Directories already resolved afresh in this decision."""
    _scope: PathScope | None = None

    @property
    def scope(self) -> PathScope:
        """Rules, work dirs and mode for path decisions (work dirs found on first use)."""
        if self._scope is None:
            self._scope = path_scope(self.context, self.rules)
        return self._scope

    def path(self, tool: str, path: str, access: FileAccess, cwd: str) -> PermissionDecision:
        """The file decision for one path, computed once per command decision."""
        key = (tool, path, access, cwd)
        found = self.decided.get(key)
        if found is None:
            found = decide_path_access(tool, path, access, self.scope, cwd, self.memo)
            self.decided[key] = found
        return found

    def prepare(self, cwd: str, paths: list[str], *, full: bool) -> None:
        """Resolve `cwd` before the paths: afresh if paths inside it follow.

        Each of those then costs one `lstat`. If only `.` is checked, the `stat`-checked
        directory cache answers instead (it is never used to resolve other paths).
        """
        if cwd in self.fresh:
            return
        if _worth_anchoring(paths, cwd.rstrip("/") + "/", full=full):
            resolve_fresh(cwd, self.memo)
            self.fresh.add(cwd)
        elif full and cached_normpath(cwd) not in self.memo:
            self.memo[cached_normpath(cwd)] = resolve_dir(cwd)


def _worth_anchoring(paths: list[str], prefix: str, *, full: bool) -> bool:
    """Whether resolving the cwd afresh first saves system calls (a guess from the text).

    It does for a file right in it, for two paths in it, and for arguments of commands
    that change things (often no file at all: a missing path is resolved from its parent).
    A lone read of `a/b` is cheaper resolved whole, with `.` from the directory cache.
    """
    inside = 0
    for path in paths:
        if path.startswith("/"):
            if not path.startswith(prefix):
                continue
            path = path[len(prefix) :]
        elif path == "." or path.startswith(("~", "..")):
            continue
        if not full or "/" not in path.removeprefix("./"):
            return True
        inside += 1
    return inside > 1


def _check_paths(
    part: ShellCommand, access: FileAccess, env: _Env, verdict: _Verdict, *, full: bool
) -> None:
    """Check a part's path arguments: all rules and work dirs if `full`, else only restrictions."""
    assert env.dirs is not None
    args = part.args
    tool = "Read" if access == "read" else "Edit"
    paths = list(args.paths)
    if env.rules.path_rules:
        paths.extend(args.weak)
    if full:
        if args.unknown:
            verdict.ask(f"`{part.text[:80]}` has arguments computed at run time")
        if part.walk is None or part.walk.dot:
            paths.append(".")
    for cwd in env.dirs:
        candidates = list(paths)
        for pattern in args.globs:
            matches = expand_glob(pattern, cwd)
            if matches is None:
                verdict.ask(f"can't tell which files `{pattern}` names")
            else:
                candidates.extend(matches)
        env.prepare(cwd, candidates, full=full)
        for path in candidates:
            if full:
                verdict.take(env.path(tool, path, access, cwd))
                continue
            limited = restriction(tool, path, access, env.scope, cwd, env.memo)
            if limited is not None:
                verdict.take(limited)
        if full and part.walk is not None:
            _check_walk(part.walk, candidates, cwd, env, verdict)


def _check_walk(
    walk: WalkSpec, candidates: list[str], cwd: str, env: _Env, verdict: _Verdict
) -> None:
    """Ask unless the tree a recursive reader walks stays inside and reads nothing it may not.

    The candidates are every word that may be a path (the pattern too: harmless), and `.`
    when the command reads it without naming it (`grep -r x`, `rg x`, `find -name x`).
    """
    roots = [
        resolve_path(path, cwd, env.memo).real
        for path in candidates
        # grep skips a named directory whose name it excludes, too.
        if os.path.basename(os.path.normpath(path)) not in walk.skip_dirs
    ]
    judge = _contents_judge(env.scope) if walk.contents else None
    problem = walk_problem(
        roots, env.scope.dirs, judge=judge, hidden=walk.hidden, skip_dirs=walk.skip_dirs
    )
    if problem is not None:
        verdict.ask(f"a recursive read: {problem}")


def _contents_judge(scope: PathScope) -> Judge:
    def judge(path: str, real: str, links: int) -> str | None:
        found = scope.verdict("Read", "read", ResolvedPath(path, real))
        if found.kind == "allow" or (found.kind == "inside" and links <= 1):
            return None
        if found.kind == "inside":
            return f"{path} has other hard links, which may be outside the working directories"
        if found.kind == "outside":
            return f"{path} links outside the working directories"
        if found.kind == "sensitive":
            return f"{path} is sensitive ({found.token})"
        return f"{path}: rule `{found.rule}` applies to it"

    return judge


def _judge(
    part: ShellCommand, allowed: bool, env: _Env, verdict: _Verdict, *, exact: bool = False
) -> None:
    if env.dirs is None:
        verdict.ask("a `cd` goes to a directory that can't be known before running")
        return
    if part.problems:
        verdict.ask(f"`{part.text[:80]}`: {part.problems[0]}", changes=True)
        _check_paths(part, "write", env, verdict, full=False)
        return
    if allowed:
        check_ruled(part, exact=exact, env=env, verdict=verdict)
        _check_paths(part, "write", env, verdict, full=False)
        return
    if part.read_only:
        if part.name == "git":
            _check_git(env, verdict)
        if part.reads_paths:
            _check_paths(part, "read", env, verdict, full=True)
        return
    if env.context.mode is PermissionMode.ACCEPT_EDITS and part.name in _EDIT_IN_ACCEPT_EDITS:
        _check_paths(part, "write", env, verdict, full=True)
        return
    verdict.ask(f"`{part.text[:80]}` may change things", changes=True)
    _check_paths(part, "write", env, verdict, full=False)
    if part.suggestion is not None and not part.nested:
        verdict.suggest([_suggested_rule(part.suggestion)])


def _check_git(env: _Env, verdict: _Verdict) -> None:
    """A read-only git command asks if the repository's config makes git run a program."""
    if env.git_checked:
        return  # once per decision, however many git parts
    env.git_checked = True
    for cwd in env.dirs or ():
        problem = git_config_problem(cwd)
        if problem is not None:
            verdict.ask(problem, changes=True)
            return


@lru_cache(maxsize=1024)
def _suggested_rule(specifier: str) -> PermissionRule:
    # Rules are frozen, so one object can be offered by many decisions.
    return PermissionRule(tool_name=_TOOL, rule_content=specifier, source="session")


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
        env.prepare(cwd, [target.value], full=False)
        for access in accesses:
            tool = "Read" if access == "read" else "Edit"
            decision = env.path(tool, target.value, access, cwd)
            if decision.behavior is not PermissionBehavior.ALLOW and access == "write":
                verdict.changes = True
            verdict.take(decision)


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
    rules = rule_set(context)
    plan = shell_plan(rules, command, cwd)
    if plan.deny is not None:
        return PermissionDecision(
            behavior=PermissionBehavior.DENY, reason=f"denied by rule `{plan.deny}`", rule=plan.deny
        )
    verdict = _Verdict()
    for rule in plan.asks:
        verdict.ask(f"rule `{rule}` asks")
        verdict.rule = verdict.rule or rule
    for problem in analysis.problems:
        verdict.ask(f"`{command[:80]}`: {problem}", changes=True)
    env = _Env(context, rules, possible_dirs(analysis, cwd))
    exact = plan.exact or (False,) * len(plan.allowed)
    for part, allowed, whole in zip(analysis.commands, plan.allowed, exact, strict=True):
        _judge(part, allowed, env, verdict, exact=whole)
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
    if any(part.name == "git" for part in analysis.commands):
        dirs = possible_dirs(analysis, cwd)
        if dirs is None or any(git_config_problem(d) is not None for d in dirs):
            return False
    return all(
        r.access == "read" or r.target.value in _HARMLESS_TARGETS for r in analysis.redirects
    )


def match_allow_rule(
    rule: PermissionRule, command: str, context: PermissionContext, *, cwd: str
) -> bool:
    """Whether a `Bash` allow rule allows a command: its words match, and so do the hazards.

    The same decision as `check_shell_command` with that rule as the only `Bash` rule, so
    a rule matched after the command's own check asked still grants words only, never what
    the hazards of the command do (one code path). A compound exact rule (`a | b`) is the
    whole command as the user saw it, and matches by its text (and the repository config
    git would read, which the text never shows).

    Args:
        rule: An allow rule of the `Bash` tool.
        command: The shell command.
        context: Mode and work dirs (its other `Bash` rules are not used).
        cwd: The shell's current directory.
    """
    if not match_shell_rule(rule, command, cwd=cwd):
        return False
    if rule.rule_content is None or shell_words(rule.rule_content) is None:
        return config_problem(command, cwd) is None
    only = context.model_copy(
        update={
            "allow_rules": [rule],
            "ask_rules": [r for r in context.ask_rules if r.tool_name != _TOOL],
            "deny_rules": [r for r in context.deny_rules if r.tool_name != _TOOL],
        }
    )
    found = check_shell_command(command, only, cwd=cwd)
    return found.behavior is PermissionBehavior.ALLOW
