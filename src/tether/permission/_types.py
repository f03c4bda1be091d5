"""The permission vocabulary: modes, behaviours, rules, context and decisions.

`PermissionRule` and `PermissionBehavior` are defined in `tether._rule` (below `message`,
whose blocks carry rules) and re-exported here unchanged.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator

from tether._rule import PermissionBehavior, PermissionRule

__all__ = [
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionMode",
    "PermissionRule",
]


class PermissionMode(StrEnum):
    """How the engine treats calls that no rule decides."""

    DEFAULT = "default"
    """Read-only calls inside the work dirs run; everything else asks."""
    ACCEPT_EDITS = "accept_edits"
    """Like DEFAULT, and file edits inside the work dirs run without asking."""
    EXPLORE = "explore"
    """Read-only: only read-only calls may run; the rest are denied."""
    BYPASS = "bypass"
    """Everything not denied by a rule runs."""
    DONT_ASK = "dont_ask"
    """Unattended: whatever would ask is denied instead."""


def _coerce_rules(value: Any, behavior: PermissionBehavior) -> list[PermissionRule]:
    rules: list[PermissionRule] = []
    for item in value or []:
        if isinstance(item, str):
            rules.append(PermissionRule.parse(item, behavior=behavior))
        elif isinstance(item, PermissionRule):
            rules.append(
                item
                if item.behavior is behavior
                else item.model_copy(update={"behavior": behavior})
            )
        else:
            rules.append(PermissionRule.model_validate({**item, "behavior": behavior}))
    return rules


_RULE_FIELDS = (
    ("allow_rules", PermissionBehavior.ALLOW),
    ("ask_rules", PermissionBehavior.ASK),
    ("deny_rules", PermissionBehavior.DENY),
)


class PermissionContext(BaseModel):
    """Mode, working directories and rules: everything the engine decides from.

    Rules may be given as `PermissionRule`s or in their text form.
    """

    model_config = ConfigDict(defer_build=True, extra="forbid")

    mode: PermissionMode = PermissionMode.DEFAULT
    """How calls that no rule decides are treated."""
    allow_rules: list[PermissionRule] = Field(default_factory=list)
    """Rules that allow matching calls (configured or accepted by the user)."""
    ask_rules: list[PermissionRule] = Field(default_factory=list)
    """Rules that make matching calls ask."""
    deny_rules: list[PermissionRule] = Field(default_factory=list)
    """Rules that deny matching calls; they win over every allow."""
    working_directories: list[str] = Field(default_factory=list)
    """Directories file tools may use; empty means the process's current directory."""
    allow_broader_confirm_rules: bool = False
    """Accept any rule sent with a confirmation (for trusted front ends); by default a
    `ConfirmResult` may carry only the suggested rules or exact ones matching its call."""

    def __init__(self, **data: Any) -> None:
        # Parse text rules before pydantic validation, so a bad rule raises
        # `PermissionRuleError` itself rather than a wrapped `ValidationError`. (No data:
        # the default context every new or loaded state without rules makes; nothing to do.)
        if data:
            for key, behavior in _RULE_FIELDS:
                if isinstance(data.get(key), list | tuple):
                    data[key] = _coerce_rules(data[key], behavior)
        super().__init__(**data)

    @field_validator("allow_rules", mode="before")
    @classmethod
    def _allow(cls, v: Any) -> list[PermissionRule]:
        return _coerce_rules(v, PermissionBehavior.ALLOW)

    @field_validator("ask_rules", mode="before")
    @classmethod
    def _ask(cls, v: Any) -> list[PermissionRule]:
        return _coerce_rules(v, PermissionBehavior.ASK)

    @field_validator("deny_rules", mode="before")
    @classmethod
    def _deny(cls, v: Any) -> list[PermissionRule]:
        return _coerce_rules(v, PermissionBehavior.DENY)


class PermissionDecision(BaseModel):
    """The engine's answer for one tool call."""

    model_config = ConfigDict(defer_build=True, frozen=True)

    behavior: PermissionBehavior
    """Allow, ask or deny."""
    reason: str = ""
    """Why, in words fit for the user and the model."""
    rule: PermissionRule | None = None
    """The rule that decided, if one did."""
    suggested_rules: list[PermissionRule] = Field(default_factory=list)
    """Rules the user may accept so that similar calls run without asking."""
    safety_check: bool = False
    """True when an ASK comes from a safety check (a sensitive path): a bare `Tool` allow
    rule does not silence it, only a rule whose specifier names the path (or BYPASS)."""
