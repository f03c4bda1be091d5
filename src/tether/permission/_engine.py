"""`PermissionEngine`: decides ALLOW, ASK or DENY for one tool call."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

__all__ = ["PermissionEngine", "PermissionSubject"]


class PermissionSubject(Protocol):
    """What the engine needs to know of a tool (`ToolBase` satisfies it)."""

    name: str
    is_external_tool: bool

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        """Whether this call is read-only."""
        ...

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """The tool's own decision once no rule and no mode decided."""
        ...

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether a rule with a specifier matches this call."""
        ...

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        """Rules to suggest when asking."""
        ...


class PermissionEngine:
    """Decides one call from a `PermissionContext`; cheap to build, holds nothing else.

    A tool with `requires_confirmation` set asks (unless a rule allows it or the mode is
    BYPASS), even if its own check, or `is_read_only`, would allow it.

    Order: a matching deny rule → DENY; a matching ask rule → ASK; the tool's own check
    answering DENY → DENY (deny wins over every allow), or ASK because of an ask rule (a
    `Read` ask rule on the file a `Bash` command reads) → ASK; BYPASS → ALLOW; EXPLORE and a call
    that is not read-only → DENY; the tool's own check answering ALLOW → ALLOW; a matching
    allow rule → ALLOW; else the tool's answer (ASK). An ASK from a safety check (a
    sensitive path) is not silenced by a bare `Tool` allow rule, only by a rule whose
    specifier matches (and names the path). Under DONT_ASK every ASK becomes DENY.
    """

    def __init__(self, context: PermissionContext) -> None:
        self.context = context

    def _matching(
        self,
        rules: list[PermissionRule],
        subject: PermissionSubject,
        tool_input: dict[str, Any],
        tool_state: Mapping[str, Any] | None,
        *,
        bare: bool = True,
    ) -> PermissionRule | None:
        for rule in rules:
            if rule.tool_name != subject.name:
                continue
            if rule.rule_content is None:
                if bare:
                    return rule
            elif subject.match_rule(rule, tool_input, self.context, tool_state):
                return rule
        return None

    async def decide(
        self,
        subject: PermissionSubject,
        tool_input: dict[str, Any],
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """Decide whether the call may run; `tool_state` is the tool's session state."""
        decision = await self._decide(subject, tool_input, tool_state)
        if decision.behavior is PermissionBehavior.ASK:
            if self.context.mode is PermissionMode.DONT_ASK:
                return PermissionDecision(
                    behavior=PermissionBehavior.DENY,
                    reason=f"{decision.reason} (denied: nobody can confirm in dont_ask mode)",
                    rule=decision.rule,
                )
            if not decision.suggested_rules and decision.rule is None:
                suggestions = subject.generate_suggestions(tool_input, self.context, tool_state)
                return decision.model_copy(update={"suggested_rules": suggestions})
        return decision

    async def _decide(
        self,
        subject: PermissionSubject,
        tool_input: dict[str, Any],
        tool_state: Mapping[str, Any] | None,
    ) -> PermissionDecision:
        ctx = self.context
        # (no rules of a kind, the common case: no call at all)
        rule = (
            self._matching(ctx.deny_rules, subject, tool_input, tool_state)
            if ctx.deny_rules
            else None
        )
        if rule is not None:
            return PermissionDecision(
                behavior=PermissionBehavior.DENY, reason=f"denied by rule `{rule}`", rule=rule
            )
        rule = (
            self._matching(ctx.ask_rules, subject, tool_input, tool_state)
            if ctx.ask_rules
            else None
        )
        if rule is not None:
            return PermissionDecision(
                behavior=PermissionBehavior.ASK, reason=f"rule `{rule}` asks", rule=rule
            )
        own = await subject.check_permissions(tool_input, ctx, tool_state)
        if own.behavior is PermissionBehavior.ALLOW and getattr(
            subject, "requires_confirmation", False
        ):
            # A tool that requires confirmation asks whatever its other flags say
            # (`is_read_only=True` once made the default check allow it).
            own = PermissionDecision(
                behavior=PermissionBehavior.ASK,
                reason=f"{subject.name} asks before each call",
                suggested_rules=subject.generate_suggestions(tool_input, ctx, tool_state),
            )
        if own.behavior is PermissionBehavior.DENY:
            return own
        if own.behavior is PermissionBehavior.ASK and _from_ask_rule(own):
            # An ask rule the tool applied to what it touches (`Read(secret/**)` for
            # `cat secret/x`) asks like an ask rule of the tool itself: before any allow.
            return own
        if ctx.mode is PermissionMode.BYPASS:
            return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="bypass mode")
        if ctx.mode is PermissionMode.EXPLORE and not subject.is_read_only_call(tool_input):
            return PermissionDecision(
                behavior=PermissionBehavior.DENY,
                reason=f"{subject.name} changes things and the session is in explore "
                "(read-only) mode",
            )
        if own.behavior is not PermissionBehavior.ASK:
            return own
        rule = self._matching(
            ctx.allow_rules, subject, tool_input, tool_state, bare=not own.safety_check
        )
        if rule is not None:
            return PermissionDecision(
                behavior=PermissionBehavior.ALLOW, reason=f"allowed by rule `{rule}`", rule=rule
            )
        return own


def _from_ask_rule(decision: PermissionDecision) -> bool:
    return decision.rule is not None and decision.rule.behavior is PermissionBehavior.ASK
