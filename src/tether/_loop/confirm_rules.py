"""Rules sent with a confirmation stay within the confirmed call, checked by meaning.

A front end could otherwise slip a broad rule (`Bash`, `Write(//<above the work dir>)`)
in with the confirmation of an unrelated call. Accepted: a rule the pause suggested for
the call, one provably narrower (same tool, the same command prefix extended, a path
pattern inside the suggested folder), or the exact call (the whole command; one file of a
file tool, never a directory, which covers its subtree). Anything else raises
`RuleTooBroadError` naming why, before anything changes.
`PermissionContext.allow_broader_confirm_rules` lifts the check for trusted front ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether._loop.batch import call_arguments
from tether.errors import RuleTooBroadError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import ToolCallBlock
from tether.permission import PermissionRule, exact_path_rule_problem, narrower_than
from tether.state import AgentState

if TYPE_CHECKING:
    from tether.tool import ToolBase

__all__ = ["check_confirm_rules"]

_WILDCARDS = ("*", "?", "[")


def check_confirm_rules(
    state: AgentState,
    event: UserConfirmResultEvent,
    calls: Mapping[str, ToolCallBlock],
    tools: Mapping[str, ToolBase],
) -> None:
    """Raise `RuleTooBroadError` if an answer carries a rule beyond its call; change nothing."""
    if state.permission_context.allow_broader_confirm_rules:
        return
    context = state.permission_context
    for answer in event.confirm_results:
        call = calls[answer.tool_call.id]
        offered = {(r.tool_name, r.rule_content) for r in call.suggested_rules}
        tool = tools.get(call.name)
        shell = _is_shell(tool)
        for rule in answer.rules:
            if (rule.tool_name, rule.rule_content) in offered:  # any source or behavior
                continue
            if narrower_than(rule, call.suggested_rules, context, shell=shell):
                continue
            problem = _problem(rule, answer, tool, state)
            if problem is not None:
                raise RuleTooBroadError(
                    f"the rule {_text(rule)!r} sent with the confirmation of tool call "
                    f"{call.id!r} ({call.name}) {problem}; send one of its suggested rules "
                    f"({', '.join(_text(r) for r in call.suggested_rules) or 'none'}), a "
                    "narrower one, or an exact rule for this call"
                )


def _is_shell(tool: ToolBase | None) -> bool:
    return tool is not None and tool.name == "Bash" and not hasattr(tool, "target_path")


def _problem(
    rule: PermissionRule, answer: ConfirmResult, tool: ToolBase | None, state: AgentState
) -> str | None:
    """Why a rule is not the exact call (`None` if it is)."""
    name = answer.tool_call.name
    if rule.tool_name != name:
        return f"is for another tool than {name!r}"
    content = rule.rule_content
    if content is None:
        return "is a bare tool name, which allows every call of the tool"
    if _is_shell(tool):
        if content.endswith(":*"):
            return "is a prefix wider than the suggested ones"
    elif hasattr(tool, "target_path"):
        problem = exact_path_rule_problem(rule, state.permission_context)
        if problem is not None:
            return problem
    if any(w in content for w in _WILDCARDS):
        return "has wildcards, so it is broader than the call"
    args = call_arguments(answer.tool_call)
    context = state.permission_context
    if tool is None or args is None:
        return "cannot be checked against the call"
    if not tool.match_rule(rule, args, context, state.tool_state.get(tool.name)):
        return "does not match the call"
    return None


def _text(rule: PermissionRule) -> str:
    return rule.tool_name if rule.rule_content is None else f"{rule.tool_name}({rule.rule_content})"
