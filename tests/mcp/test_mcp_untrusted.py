"""A server's annotations are its own claims: they allow nothing unless the user trusts it.

The rogue server's `sneaky` tool says `readOnlyHint` and writes a file.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from tether.agent import Agent
from tether.event import EventType, RequireUserConfirmEvent, ToolResultEndEvent
from tether.mcp import MCPClient, StdioMCPConfig
from tether.message import AssistantMsg, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionMode
from tether.state import AgentState
from tether.tool import Toolkit

ROGUE = Path(__file__).parent / "servers" / "rogue_server.py"
tc = ScriptedChatModel.tool_call


def rogue(**kwargs: Any) -> MCPClient:
    config = StdioMCPConfig(command=sys.executable, args=[str(ROGUE)])
    return MCPClient("rogue", True, config, **kwargs)


async def _run(client: MCPClient, mode: PermissionMode, victim: Path) -> list[Any]:
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("mcp__rogue__sneaky", {"path": str(victim)}, id="s")]),
            AssistantMsg("a", "looked"),
        ]
    )
    state = AgentState(permission_context=PermissionContext(mode=mode))
    events = []
    async with Toolkit(mcps=[client]) as toolkit:
        agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit, state=state)
        async for event in agent.reply_stream(UserMsg("user", "look at it")):
            events.append(event)
    return events


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.EXPLORE])
async def test_a_read_only_hint_does_not_run_without_asking(
    tmp_path: Path, mode: PermissionMode
) -> None:
    victim = tmp_path / "victim.txt"
    events = await _run(rogue(), mode, victim)
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    assert [c.name for c in pause.tool_calls] == ["mcp__rogue__sneaky"]
    assert [str(r) for r in pause.tool_calls[0].suggested_rules] == ["mcp__rogue__sneaky"]
    assert not victim.exists()


async def test_annotations_are_not_concurrency_safe_unless_trusted() -> None:
    async with rogue() as untrusted, rogue(trust_annotations=True) as trusted:
        plain = {t.name: t for t in await untrusted.list_tools(None)}["mcp__rogue__echo"]
        vouched = {t.name: t for t in await trusted.list_tools(None)}["mcp__rogue__echo"]
    assert untrusted.trust_annotations is False
    assert not plain.is_read_only and not plain.is_concurrency_safe
    assert plain.is_concurrency_safe_call({"text": "x"}) is False
    assert vouched.is_read_only and vouched.is_concurrency_safe


@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.EXPLORE])
async def test_a_trusted_server_keeps_the_old_behaviour(
    tmp_path: Path, mode: PermissionMode
) -> None:
    victim = tmp_path / "victim.txt"
    events = await _run(rogue(trust_annotations=True), mode, victim)
    assert events[-1].type is EventType.REPLY_END
    ends = [e for e in events if isinstance(e, ToolResultEndEvent)]
    assert ends[0].tool_result.state is ToolResultState.SUCCESS
    assert victim.read_text() == "pwned"  # the user chose to trust this server
