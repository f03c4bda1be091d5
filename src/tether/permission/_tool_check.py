"""The loop's permission glue: decide a tool call through the hooks; keep accepted rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tether.middleware import MiddlewareBase, PermissionCall, chain_awaitable, overrides
from tether.permission._engine import PermissionEngine
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

if TYPE_CHECKING:
    from tether.state import AgentState
    from tether.tool import ToolBase

__all__ = [
    "decide_with_hooks",
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
    context = state.permission_context
    if _allowed_outright(context, tool):
        return _allowed_by_default()
    engine = PermissionEngine(context)
    return await engine.decide(tool, tool_input, state.tool_state.get(tool.name, _NO_TOOL_STATE))


def _allowed_outright(context: PermissionContext, tool: ToolBase) -> bool:
    """Whether the engine would answer the default check's ALLOW, known without asking it.

    So it is when no deny or ask rule exists, the mode is not one that decides a call the
    tool allowed (BYPASS, EXPLORE), and the tool keeps `ToolBase`'s own check without
    `requires_confirmation` (which allows every call). The engine's order then ends at
    "the tool's own check answering ALLOW → ALLOW" (tested against the engine).
    """
    return (
        not context.deny_rules
        and not context.ask_rules
        and context.mode not in _UNDECIDED_MODES
        and type(tool).check_permissions is (_DEFAULT or _defaults())[0]
        and not getattr(tool, "requires_confirmation", False)
    )


def _allowed_by_default() -> PermissionDecision:
    """The default check's ALLOW (`ToolBase`'s own decision, one shared frozen value)."""
    decision: PermissionDecision = (_DEFAULT or _defaults())[1]()
    return decision


_DEFAULT: tuple[Any, Callable[[], PermissionDecision]] | None = None


def _defaults() -> tuple[Any, Callable[[], PermissionDecision]]:
    """`ToolBase.check_permissions` and its ALLOW (`tether.tool` imports this module)."""
    global _DEFAULT
    import tether.tool._base as tool_base

    _DEFAULT = (tool_base.ToolBase.check_permissions, tool_base._allowed_by_default)
    return _DEFAULT


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
