"""The public surface of `tether.plugin`."""

from __future__ import annotations

import pytest

import tether.plugin
from tether.errors import ToolError
from tether.permission import PermissionContext
from tether.plugin import ActivatePluginTool, PluginScheduler
from tether.tool import ToolContext, ToolSourceBase


def test_all_is_sorted_and_complete():
    names = tether.plugin.__all__

    # isort style, as in the other packages: CONSTANTS, then Classes, then functions
    def kind(n: str) -> tuple[int, str]:
        return (0 if n.isupper() else 1 if n[0].isupper() else 2, n)

    assert list(names) == sorted(names, key=kind)
    for name in names:
        assert getattr(tether.plugin, name) is not None
    assert issubclass(PluginScheduler, ToolSourceBase)


async def test_activation_tools_need_the_session_state():
    tool = ActivatePluginTool(PluginScheduler([]))
    context = ToolContext(tool_call_id="c", reply_id="r", permission_context=PermissionContext())
    with pytest.raises(ToolError, match="need the session state"):
        await tool.call(tool.input_model(module_name="x"), context)
    assert tool.is_read_only and tool.is_concurrency_safe
