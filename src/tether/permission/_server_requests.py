"""Rules for what MCP servers may ask mid-call: `McpElicit(server)` and `McpSample(server)`.

They use the ordinary rule lists of a `PermissionContext` with a pseudo tool name; the
specifier is a glob of server names (none: every server). Deny wins, then ask, then
allow. No rule: elicitation goes to the user (that is asking already), sampling asks.
`DONT_ASK` turns every ask into a deny; `BYPASS` allows sampling without asking.
"""

from __future__ import annotations

from fnmatch import fnmatchcase
from typing import Literal

from tether.permission._types import PermissionBehavior, PermissionContext, PermissionMode

__all__ = ["ELICIT_RULE", "SAMPLE_RULE", "server_request_behavior"]

ELICIT_RULE = "McpElicit"
"""The rule name for elicitation: `McpElicit(github)` in `deny_rules` silences a server."""
SAMPLE_RULE = "McpSample"
"""The rule name for sampling: `McpSample(docs)` in `allow_rules` answers without asking."""


def server_request_behavior(
    context: PermissionContext | None, kind: Literal["elicit", "sample"], server: str
) -> PermissionBehavior:
    """Whether `server` may elicit (or sample): allow, ask (the user decides) or deny."""
    if context is None:
        return PermissionBehavior.ASK
    name = ELICIT_RULE if kind == "elicit" else SAMPLE_RULE
    for behavior, rules in (
        (PermissionBehavior.DENY, context.deny_rules),
        (PermissionBehavior.ASK, context.ask_rules),
        (PermissionBehavior.ALLOW, context.allow_rules),
    ):
        for rule in rules:
            if rule.tool_name == name and (
                rule.rule_content is None or fnmatchcase(server, rule.rule_content)
            ):
                return _in_mode(context.mode, behavior)
    default = PermissionBehavior.ALLOW if context.mode is PermissionMode.BYPASS else None
    return _in_mode(context.mode, default or PermissionBehavior.ASK)


def _in_mode(mode: PermissionMode, behavior: PermissionBehavior) -> PermissionBehavior:
    if mode is PermissionMode.DONT_ASK and behavior is PermissionBehavior.ASK:
        return PermissionBehavior.DENY
    return behavior
