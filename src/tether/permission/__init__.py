"""Permission modes, rules and the engine that decides each tool call."""

from tether.permission._engine import PermissionEngine, PermissionSubject
from tether.permission._types import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionMode,
    PermissionRule,
)

__all__ = [
    "PermissionBehavior",
    "PermissionContext",
    "PermissionDecision",
    "PermissionEngine",
    "PermissionMode",
    "PermissionRule",
    "PermissionSubject",
]
