"""Issue 16's trap: `@tool(is_read_only=True, requires_confirmation=True)` never asked.

A tool that requires confirmation asks before every call unless a rule allows it,
whatever its other flags say (read-only, concurrency-safe).
"""

from __future__ import annotations

import pytest

from tether.agent import Agent
from tether.event import RequireUserConfirmEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
)
from tether.state import AgentState
from tether.tool import Toolkit, tool

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


def _make(ran: list[str], **flags: bool):
    @tool(requires_confirmation=True, **flags)
    def peek(path: str) -> str:
        """Look at a file."""
        ran.append(path)
        return "contents"

    return peek


FLAGS = [
    {"is_read_only": True},
    {"is_read_only": True, "is_concurrency_safe": True},
    {"is_concurrency_safe": True},
    {},
]


@pytest.mark.parametrize("flags", FLAGS)
async def test_the_engine_asks_whatever_the_other_flags(flags: dict[str, bool]) -> None:
    peek = _make([], **flags)
    for mode in (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS):
        decision = await PermissionEngine(PermissionContext(mode=mode)).decide(peek, {"path": "x"})
        assert decision.behavior is ASK, (flags, mode)
        assert decision.suggested_rules
    unattended = PermissionContext(mode=PermissionMode.DONT_ASK)
    assert (await PermissionEngine(unattended).decide(peek, {"path": "x"})).behavior is DENY
    allowed = PermissionContext(allow_rules=["peek"])
    assert (await PermissionEngine(allowed).decide(peek, {"path": "x"})).behavior is ALLOW


async def test_explore_mode_asks_for_a_read_only_tool_that_requires_confirmation() -> None:
    peek = _make([], is_read_only=True)
    explore = PermissionContext(mode=PermissionMode.EXPLORE)
    assert (await PermissionEngine(explore).decide(peek, {"path": "x"})).behavior is ASK


@pytest.mark.parametrize("flags", FLAGS[:2])
async def test_an_agent_pauses_before_running_it(flags: dict[str, bool]) -> None:
    ran: list[str] = []
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [ScriptedChatModel.tool_call("peek", {"path": "x"}, id="c1")]),
            AssistantMsg("a", "done"),
        ]
    )
    agent = Agent(
        name="bot", system_prompt="p", model=model, toolkit=Toolkit([_make(ran, **flags)])
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "go"))]
    assert isinstance(events[-1], RequireUserConfirmEvent)
    assert ran == []
    # With a rule allowing it, it runs without a pause.
    ran2: list[str] = []
    model2 = ScriptedChatModel(
        [
            AssistantMsg("a", [ScriptedChatModel.tool_call("peek", {"path": "x"}, id="c1")]),
            AssistantMsg("a", "done"),
        ]
    )
    state = AgentState(permission_context=PermissionContext(allow_rules=["peek"]))
    agent2 = Agent(
        name="bot",
        system_prompt="p",
        model=model2,
        toolkit=Toolkit([_make(ran2, **flags)]),
        state=state,
    )
    events2 = [e async for e in agent2.reply_stream(UserMsg("user", "go"))]
    assert not any(isinstance(e, RequireUserConfirmEvent) for e in events2)
    assert ran2 == ["x"]
