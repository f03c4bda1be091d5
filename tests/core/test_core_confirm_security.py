"""Edited confirmations are checked again; confirmation rules stay within the confirmed call.

End to end through `Agent` with the real built-in tools, asserting the file system.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.agent import Agent
from tether.errors import ResumeError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit, tool
from tether.tool.builtin import Bash, Write

call = ScriptedChatModel.tool_call


async def _paused(work: Path, model_call: Any, *, deny: list[str], more: int = 1) -> Agent:
    state = AgentState(
        permission_context=PermissionContext(working_directories=[str(work)], deny_rules=deny)
    )
    steps: list[Any] = [AssistantMsg("a", [model_call])]
    steps += [AssistantMsg("a", "ok")] * more
    agent = Agent("a", "p", ScriptedChatModel(steps), Toolkit(tools=[Bash(), Write()]), state=state)
    await agent.reply(UserMsg("user", "go"))
    pending = agent.state.pending
    assert pending is not None and len(pending.awaiting_confirmation) == 1, pending
    return agent


def _confirm(agent: Agent, edited: dict[str, Any] | str | None, rules: Any = ()) -> Any:
    pending = agent.state.pending
    assert pending is not None
    asked = pending.awaiting_confirmation[0]
    tool_call = asked if edited is None else asked.model_copy(update={"input": edited})
    return UserConfirmResultEvent(
        reply_id=pending.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=tool_call, rules=list(rules))],
    )


def _result(msg: Any, call_id: str) -> ToolResultBlock:
    return next(b for b in msg.content if isinstance(b, ToolResultBlock) and b.id == call_id)


async def test_an_edit_into_a_denied_command_is_denied_and_nothing_is_deleted(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    agent = await _paused(tmp_path, call("Bash", {"command": "ls /"}, id="b1"), deny=["Bash(rm:*)"])
    final = await agent.reply(_confirm(agent, json.dumps({"command": f"rm {victim}"})))
    assert victim.read_text() == "keep me"
    result = _result(final, "b1")
    assert result.state.value == "denied" and "denied" in result.get_text().lower()


async def test_an_edit_onto_a_denied_path_is_denied_and_nothing_is_written(
    tmp_path: Path,
) -> None:
    notes = str(tmp_path / "notes.txt")
    agent = await _paused(
        tmp_path,
        call("Write", {"file_path": notes, "content": "SECRET=1"}, id="w1"),
        deny=["Write(.env)"],
    )
    edited = {"file_path": str(tmp_path / ".env"), "content": "SECRET=1"}
    final = await agent.reply(_confirm(agent, edited))  # a dict is accepted as the input
    assert not (tmp_path / ".env").exists() and not Path(notes).exists()
    assert _result(final, "w1").state.value == "denied"


async def test_an_unedited_confirmation_still_runs(tmp_path: Path) -> None:
    agent = await _paused(
        tmp_path,
        call("Write", {"file_path": str(tmp_path / "notes.txt"), "content": "hi"}, id="w1"),
        deny=["Write(.env)"],
    )
    await agent.reply(_confirm(agent, None))
    assert (tmp_path / "notes.txt").read_text() == "hi"


async def test_an_edit_as_a_json_string_runs_the_edited_call(tmp_path: Path) -> None:
    agent = await _paused(
        tmp_path,
        call("Write", {"file_path": str(tmp_path / "a.txt"), "content": "hi"}, id="w1"),
        deny=[],
    )
    edited = json.dumps({"file_path": str(tmp_path / "b.txt"), "content": "edited"})
    await agent.reply(_confirm(agent, edited))
    assert (tmp_path / "b.txt").read_text() == "edited" and not (tmp_path / "a.txt").exists()


@tool(requires_confirmation=True)
async def transfer(amount: int) -> str:
    """Transfer money."""
    return "sent"


async def _paused_transfer(state: AgentState | None = None) -> Agent:
    steps = [AssistantMsg("a", [call("transfer", {"amount": 5}, id="t1")]), AssistantMsg("a", "ok")]
    agent = Agent("a", "p", ScriptedChatModel(steps), Toolkit(tools=[transfer]), state=state)
    await agent.reply(UserMsg("user", "pay"))
    return agent


@pytest.mark.parametrize(
    "rule",
    ["Bash", "Write", "Bash(rm:*)", "mcp__x__y"],
)
async def test_rules_for_another_tool_are_refused_and_nothing_changes(rule: str) -> None:
    agent = await _paused_transfer()
    before = agent.state.model_dump_json()
    with pytest.raises(ResumeError, match="transfer"):
        await agent.reply(_confirm(agent, None, [PermissionRule.parse(rule)]))
    assert agent.state.model_dump_json() == before


async def test_the_suggested_rule_retyped_by_a_front_end_is_accepted(tmp_path: Path) -> None:
    agent = await _paused(tmp_path, call("Bash", {"command": "git push"}, id="b1"), deny=[])
    await agent.reply(_confirm(agent, None, [PermissionRule.parse("Bash(git push:*)")]))
    assert PermissionRule.parse("Bash(git push:*)") in agent.state.permission_context.allow_rules


async def test_the_suggested_rule_is_accepted_and_remembered() -> None:
    agent = await _paused_transfer()
    pending = agent.state.pending
    assert pending is not None
    suggested = pending.awaiting_confirmation[0].suggested_rules
    assert suggested
    await agent.reply(_confirm(agent, None, suggested))
    assert all(r in agent.state.permission_context.allow_rules for r in suggested)


async def test_a_broader_bash_rule_is_refused_a_narrower_one_accepted(tmp_path: Path) -> None:
    command = "git push origin main"
    agent = await _paused(tmp_path, call("Bash", {"command": command}, id="b1"), deny=[])
    pending = agent.state.pending
    assert pending is not None
    (suggested,) = pending.awaiting_confirmation[0].suggested_rules
    assert suggested.rule_content == "git push:*"
    before = agent.state.model_dump_json()
    for broader in ("Bash(git:*)", "Bash(*)", "Bash(git log)"):  # broader, or not this call
        with pytest.raises(ResumeError, match="b1"):
            await agent.reply(_confirm(agent, None, [PermissionRule.parse(broader)]))
        assert agent.state.model_dump_json() == before
    exact = PermissionRule.parse(f"Bash({command})")
    await agent.reply(_confirm(agent, None, [exact]))
    assert exact in agent.state.permission_context.allow_rules


async def test_a_trusted_front_end_may_allow_broader_rules() -> None:
    state = AgentState(permission_context=PermissionContext(allow_broader_confirm_rules=True))
    agent = await _paused_transfer(state)
    broad = PermissionRule.parse("Bash")
    await agent.reply(_confirm(agent, None, [broad]))
    assert broad in agent.state.permission_context.allow_rules
