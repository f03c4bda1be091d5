"""The decision without the engine (`_allowed_outright`) is the engine's, wherever it is taken."""

from __future__ import annotations

import itertools

import pytest
from pydantic import BaseModel

from tether.permission import PermissionContext, PermissionEngine, PermissionMode, PermissionRule
from tether.permission._tool_check import _decide_call
from tether.state import AgentState
from tether.tool import ToolBase


class _In(BaseModel):
    x: int = 0


class _Tool(ToolBase):
    name = "t"
    description = "d"
    input_model = _In

    async def call(self, tool_input, context):  # type: ignore[no-untyped-def, override]
        return "ok"


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
    state = AgentState(permission_context=context)
    tool = _tool(read_only, confirm)
    expected = await PermissionEngine(context).decide(tool, {"x": 1}, {})
    assert await _decide_call(state, tool, {"x": 1}) == expected
    assert state.tool_state == {}  # a check creates no entry in the state
