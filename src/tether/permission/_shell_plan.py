"""What the `Bash` rules say about a command: pure string work, memoised per command."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from tether.permission._path_rules import RuleSet
from tether.permission._shell_rules import is_exact_rule, match_part, match_shell_rule
from tether.permission._types import PermissionBehavior, PermissionRule
from tether.shell import analyze_command

__all__ = ["ShellPlan", "shell_plan"]

ALLOW = PermissionBehavior.ALLOW


@dataclass(frozen=True, slots=True)
class ShellPlan:
    """The `Bash` rules' verdict on one command; file arguments are judged separately."""

    deny: PermissionRule | None
    """The first deny rule that matches any part."""
    asks: tuple[PermissionRule, ...]
    """Every ask rule that matches any part, in order."""
    allowed: tuple[bool, ...]
    """Per simple command (as in `analyze_command`): whether an allow rule matches it."""
    exact: tuple[bool, ...] = ()
    """Per simple command: whether an exact allow rule (no `:*`) matches it, and it is the
    whole command (no other part, no `cd`): it then allows the hazards its words show."""


def shell_plan(rules: RuleSet, command: str, cwd: str) -> ShellPlan:
    """The plan for a command under a rule set, memoised when it is pure string work.

    It is unless a deny/ask list holds a rule whose behaviour is ALLOW (added to the list
    by hand): `match_shell_rule` matches those strictly, which looks at the file system.
    """
    if rules.pure_bash:
        return _memo_plan(rules, command, "")
    return _plan(rules, command, cwd)


def _plan(rules: RuleSet, command: str, cwd: str) -> ShellPlan:
    deny = next((r for r in rules.bash_deny if match_shell_rule(r, command, cwd=cwd)), None)
    asks = tuple(r for r in rules.bash_ask if match_shell_rule(r, command, cwd=cwd))
    analysis = analyze_command(command)
    matched = [
        [r for r in rules.bash_allow if match_part(r.rule_content or "", part, ALLOW)]
        for part in analysis.commands
    ]
    whole = len(analysis.commands) == 1 and not analysis.cd_targets
    return ShellPlan(
        deny=deny,
        asks=asks,
        allowed=tuple(bool(found) for found in matched),
        exact=tuple(
            whole and any(is_exact_rule(r.rule_content or "") for r in found) for found in matched
        ),
    )


_memo_plan = lru_cache(maxsize=4096)(_plan)  # rule sets compare by identity
