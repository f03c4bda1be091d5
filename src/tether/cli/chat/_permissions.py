"""`/permissions`: list the rules, add or remove one, switch the mode."""

from __future__ import annotations

from tether.cli.chat._args import MODES
from tether.errors import PermissionRuleError
from tether.permission import PermissionBehavior, PermissionContext, PermissionMode, PermissionRule

__all__ = ["permissions_command"]

_LISTS = {"allow": "allow_rules", "ask": "ask_rules", "deny": "deny_rules"}
_USAGE = "usage: /permissions [allow|ask|deny RULE | remove RULE | mode MODE]"


def permissions_command(context: PermissionContext, arg: str) -> list[str]:
    """Apply `/permissions <arg>` to `context`; return the lines to show."""
    verb, _, rest = arg.partition(" ")
    rest = rest.strip()
    if not verb:
        return _listing(context)
    if verb == "mode":
        if rest not in MODES:
            return [f"mode must be one of: {', '.join(MODES)}"]
        context.mode = PermissionMode(rest)
        return [f"mode: {rest}"]
    if verb in _LISTS and rest:
        try:
            rule = PermissionRule.parse(rest, behavior=PermissionBehavior(verb), source="session")
        except PermissionRuleError as exc:
            return [str(exc)]
        rules = getattr(context, _LISTS[verb])
        if all(str(r) != str(rule) for r in rules):
            rules.append(rule)
        return [f"added {verb} rule {rule}"]
    if verb == "remove" and rest:
        removed = 0
        for name in _LISTS.values():
            rules = getattr(context, name)
            kept = [r for r in rules if str(r) != rest]
            removed += len(rules) - len(kept)
            setattr(context, name, kept)
        return [f"removed {rest}" if removed else f"no rule {rest!r}; /permissions lists them"]
    return [_USAGE]


def _listing(context: PermissionContext) -> list[str]:
    lines = [f"mode: {context.mode.value}"]
    lines += [f"work dir: {d}" for d in context.working_directories]
    for verb, name in _LISTS.items():
        rules = getattr(context, name)
        lines += [f"{verb}: {r}  [{r.source}]" for r in rules]
        if not rules:
            lines.append(f"{verb}: (none)")
    return lines
