"""The loop's shortcut past the engine gives the engine's decision, wherever it is taken.

The shortcut (`_loop/acting.py`) is taken when the engine defers to the tool
(`defers_to_tool`) and the tool's own check allows every call (`allows_every_call`).
"""

from __future__ import annotations

import itertools

import pytest
from pydantic import BaseModel

from tether._loop.permission_check import defers_to_tool
from tether.permission import (
    PermissionContext,
    PermissionDecision,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)
from tether.tool import ToolBase
from tether.tool._base import allowed_by_default, allows_every_call


class _In(BaseModel):
    x: int = 0


class _Tool(ToolBase):
    name = "t"
    description = "d"
    input_model = _In

    async def call(self, tool_input, context):  # type: ignore[no-untyped-def, override]
        return "ok"


class _OwnCheck(_Tool):
    async def check_permissions(self, tool_input, context, tool_state=None):  # type: ignore[no-untyped-def, override]
        return PermissionDecision(behavior="ask", reason="mine")


def _tool(read_only: bool, confirm: bool) -> _Tool:
    tool = _Tool()
    tool.is_read_only = read_only
    tool.requires_confirmation = confirm
    return tool


@pytest.mark.parametrize(
    ("mode", "rules", "read_only", "confirm"),
    list(
        itertools.product(
            list(PermissionMode), ["none", "allow", "ask", "deny"], [False, True], [False, True]
        )
    ),
)
async def test_the_shortcut_gives_the_engines_decision(
    mode: PermissionMode, rules: str, read_only: bool, confirm: bool
) -> None:
    context = PermissionContext(mode=mode)
    if rules != "none":
        getattr(context, f"{rules}_rules").append(PermissionRule(tool_name="t"))
    tool = _tool(read_only, confirm)
    expected = await PermissionEngine(context).decide(tool, {"x": 1}, {})
    if defers_to_tool(context) and allows_every_call(tool):
        assert allowed_by_default() == expected


def test_the_shortcut_is_taken_where_it_should_be() -> None:
    # Not vacuous: the default mode with no rule defers, and a plain tool allows every call.
    assert defers_to_tool(PermissionContext())
    assert allows_every_call(_tool(read_only=False, confirm=False))
    assert not allows_every_call(_tool(read_only=True, confirm=True))  # asks unless read-only
    assert not allows_every_call(_OwnCheck())  # its own check may say anything
    context = PermissionContext()
    context.deny_rules.append(PermissionRule(tool_name="t"))
    assert not defers_to_tool(context)
    assert not defers_to_tool(PermissionContext(mode=PermissionMode.BYPASS))
