"""Rules sent with a confirmation stay within the confirmed call.

A front end could otherwise slip a broad rule (`Bash`, `Write`) in with the confirmation
of an unrelated call. Accepted: the rules the pause suggested for the call, and exact
rules (no wildcard) of the call's tool that match the confirmed (possibly edited) call.
`PermissionContext.allow_broader_confirm_rules` lifts the check for trusted front ends.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from tether._loop.batch import call_arguments
from tether.errors import ResumeError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import ToolCallBlock
from tether.permission import PermissionRule
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
    """Raise `ResumeError` if an answer carries a rule beyond its call; change nothing."""
    if state.permission_context.allow_broader_confirm_rules:
        return
    for answer in event.confirm_results:
        call = calls[answer.tool_call.id]
        offered = {(r.tool_name, r.rule_content) for r in call.suggested_rules}
        for rule in answer.rules:
            if (rule.tool_name, rule.rule_content) in offered:  # any source or behavior
                continue
            problem = _problem(rule, answer, tools.get(call.name), state)
            if problem is not None:
                raise ResumeError(
                    f"the rule {_text(rule)!r} sent with the confirmation of tool call "
                    f"{call.id!r} ({call.name}) {problem}; send one of its suggested rules "
                    f"({', '.join(_text(r) for r in call.suggested_rules) or 'none'}) or an "
                    "exact rule for this call"
                )


def _problem(
    rule: PermissionRule, answer: ConfirmResult, tool: ToolBase | None, state: AgentState
) -> str | None:
    name = answer.tool_call.name
    if rule.tool_name != name:
        return f"is for another tool than {name!r}"
    content = rule.rule_content
    if content is None or any(w in content for w in _WILDCARDS):
        return "is broader than the call"
    args = call_arguments(answer.tool_call)
    context = state.permission_context
    if tool is None or args is None:
        return "cannot be checked against the call"
    if not tool.match_rule(rule, args, context, state.tool_state.get(tool.name)):
        return "does not match the call"
    return None


def _text(rule: PermissionRule) -> str:
    return rule.tool_name if rule.rule_content is None else f"{rule.tool_name}({rule.rule_content})"
