"""The loop's permission glue: decide a tool call through the hooks; keep accepted rules."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from tether.message import ToolCallState, ToolResultBlock, ToolResultState
from tether.middleware import MiddlewareBase, PermissionCall, chain_awaitable
from tether.permission._engine import PermissionEngine
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)

__all__ = ["check_tool_call", "remember_rules"]


async def _engine_decision(call: PermissionCall) -> PermissionDecision:
    engine = PermissionEngine(call.state.permission_context)
    return await engine.decide(
        call.tool, call.tool_input, call.state.tool_state_for(call.tool.name)
    )


async def check_tool_call(
    middlewares: Sequence[MiddlewareBase], check: PermissionCall
) -> ToolResultBlock | None:
    """Decide `check` through the `on_check_permission` hooks, then record the decision.

    DENY returns the error result the model reads. Otherwise the call's state is set:
    ASKING (with the suggested rules), SUBMITTED for an external tool, else ALLOWED.
    """
    decision: PermissionDecision = await chain_awaitable(
        middlewares, "on_check_permission", check, _engine_decision
    )
    call = check.tool_call
    if decision.behavior is PermissionBehavior.DENY:
        return ToolResultBlock(
            id=call.id,
            name=call.name,
            output=f"Permission denied: {decision.reason}. Do not retry this call as is.",
            state=ToolResultState.DENIED,
        )
    if decision.behavior is PermissionBehavior.ASK:
        call.state = ToolCallState.ASKING
        call.suggested_rules = list(decision.suggested_rules)
    else:
        call.state = (
            ToolCallState.SUBMITTED if check.tool.is_external_tool else ToolCallState.ALLOWED
        )
    return None


def remember_rules(context: PermissionContext, rules: Iterable[PermissionRule]) -> None:
    """Add the rules a user accepted to `context`, each to its behavior's list, once."""
    buckets = {
        PermissionBehavior.ALLOW: context.allow_rules,
        PermissionBehavior.ASK: context.ask_rules,
        PermissionBehavior.DENY: context.deny_rules,
    }
    for rule in rules:
        bucket = buckets[rule.behavior]
        if rule not in bucket:
            bucket.append(rule)
