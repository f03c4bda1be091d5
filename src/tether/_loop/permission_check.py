"""The loop's permission glue: decide a tool call through the hooks; keep accepted rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tether.middleware import MiddlewareBase, chain_awaitable, overrides
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    from tether.middleware import PermissionCall
    from tether.state import AgentState
    from tether.tool import ToolBase

__all__ = [
    "decide_with_hooks",
    "defers_to_tool",
    "remember_rules",
]


async def _engine_decision(call: PermissionCall) -> PermissionDecision:
    """The engine's decision for `call` (the innermost handler of `on_check_permission`)."""
    return await _decide_call(call.state, call.tool, call.tool_input)


_NO_TOOL_STATE: Mapping[str, Any] = MappingProxyType({})
"""What a tool's check reads as its state before the tool has any (not written to the
session's state: a check only reads it)."""
_UNDECIDED_MODES = frozenset({PermissionMode.BYPASS, PermissionMode.EXPLORE})
"""Modes that decide a call the tool's own check allowed (BYPASS, EXPLORE)."""


async def _decide_call(
    state: AgentState, tool: ToolBase, tool_input: dict[str, Any]
) -> PermissionDecision:
    """The engine's decision for a call of `tool` in session `state` (no hooks)."""
    engine = PermissionEngine(state.permission_context)
    return await engine.decide(tool, tool_input, state.tool_state.get(tool.name, _NO_TOOL_STATE))


def defers_to_tool(context: PermissionContext) -> bool:
    """Whether the engine's decision in `context` is whatever the tool's own check says.

    So it is when no deny or ask rule exists and the mode is not one that decides a call
    the tool allowed (BYPASS, EXPLORE): the engine's order then ends at the tool's own
    check (an allow rule changes nothing once the tool allows). The loop skips the engine
    for a tool whose check allows every call (tested against the engine).
    """
    return not context.deny_rules and not context.ask_rules and context.mode not in _UNDECIDED_MODES


async def decide_with_hooks(
    middlewares: Sequence[MiddlewareBase],
    state: AgentState,
    tool: ToolBase,
    tool_input: dict[str, Any],
    make_call: Callable[[], PermissionCall],
) -> PermissionDecision:
    """The decision through the `on_check_permission` hooks, or the engine's alone.

    `make_call()` builds the hooks' record, only when there is a hook.
    """
    if middlewares and any(overrides(mw, "on_check_permission") for mw in middlewares):
        decision: PermissionDecision = await chain_awaitable(
            middlewares, "on_check_permission", make_call(), _engine_decision
        )
        return decision
    return await _decide_call(state, tool, tool_input)


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
