"""Fake tools implementing the `PermissionSubject` protocol with the real helpers.

They stand in for the built-in Bash/Read/Write tools so the engine is exercised end to end
without depending on `tether.tool.builtin`.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from tether.permission import (
    FileAccess,
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
    check_path_access,
    check_shell_command,
    is_read_only_command,
    match_path_rule,
    match_shell_rule,
    suggest_path_rules,
    suggest_shell_rules,
)


def _cwd(context: PermissionContext, tool_state: Mapping[str, Any] | None) -> str:
    if tool_state and "cwd" in tool_state:
        return str(tool_state["cwd"])
    dirs = context.working_directories
    return dirs[0] if dirs else os.getcwd()


class FakeBash:
    name = "Bash"
    is_external_tool = False

    def __init__(self) -> None:
        self.checks = 0

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        return is_read_only_command(tool_input["command"], cwd=os.getcwd())

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        self.checks += 1
        return check_shell_command(tool_input["command"], context, cwd=_cwd(context, tool_state))

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        return match_shell_rule(rule, tool_input["command"], cwd=_cwd(context, tool_state))

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        return suggest_shell_rules(tool_input["command"], cwd=_cwd(context, tool_state))


class FakeFileTool:
    """Read (access "read") or Write/Edit (access "write") on `tool_input["path"]`."""

    is_external_tool = False

    def __init__(self, name: str, access: str) -> None:
        self.name = name
        self.access = access

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        return self.access == "read"

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        access: FileAccess = "read" if self.access == "read" else "write"
        return check_path_access(
            self.name, tool_input["path"], access, context, cwd=_cwd(context, tool_state)
        )

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        return match_path_rule(rule, tool_input["path"], context, cwd=_cwd(context, tool_state))

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        return suggest_path_rules(
            self.name, tool_input["path"], context, cwd=_cwd(context, tool_state)
        )


class FakePlainTool:
    """A tool without specifier rules: asks unless read-only (like `ToolBase` defaults)."""

    is_external_tool = False

    def __init__(
        self, name: str, *, read_only: bool = False, own: PermissionBehavior | None = None
    ) -> None:
        self.name = name
        self.read_only = read_only
        self.own = own

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        return self.read_only

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        if self.own is not None:
            return PermissionDecision(behavior=self.own, reason="own check")
        if self.read_only:
            return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="read-only")
        return PermissionDecision(behavior=PermissionBehavior.ASK, reason=f"{self.name} asks")

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        return False

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        return [PermissionRule(tool_name=self.name, source="session")]
