"""Rules sent with a confirmation are checked by meaning (issue 31).

A smuggled rule (a directory above the work dir, a bare tool name, a wider prefix, a
floating or climbing pattern) raises `RuleTooBroadError` and leaves the state unchanged;
the suggested rule and narrower ones are accepted. End to end through `Agent` with the
real built-in tools.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tether.agent import Agent
from tether.errors import ResumeError, RuleTooBroadError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit
from tether.tool.builtin import Bash, Write

call = ScriptedChatModel.tool_call


@pytest.fixture
def work(tmp_path: Path) -> Path:
    root = Path(os.path.realpath(tmp_path)) / "work"
    (root / "notes" / "sub").mkdir(parents=True)
    return root


async def _paused(work: Path, model_call: Any) -> Agent:
    state = AgentState(permission_context=PermissionContext(working_directories=[str(work)]))
    steps: list[Any] = [AssistantMsg("a", [model_call]), AssistantMsg("a", "ok")]
    agent = Agent("a", "p", ScriptedChatModel(steps), Toolkit(tools=[Bash(), Write()]), state=state)
    await agent.reply(UserMsg("user", "go"))
    pending = agent.state.pending
    assert pending is not None and len(pending.awaiting_confirmation) == 1, pending
    return agent


def _confirm(agent: Agent, rules: list[PermissionRule]) -> UserConfirmResultEvent:
    pending = agent.state.pending
    assert pending is not None
    asked = pending.awaiting_confirmation[0]
    return UserConfirmResultEvent(
        reply_id=pending.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=asked, rules=rules)],
    )


def _write(work: Path) -> Any:
    return call("Write", {"file_path": str(work / "notes" / "a.txt"), "content": "x"}, id="w1")


def _smuggled(work: Path) -> list[str]:
    return [
        f"Write(/{work.parent})",  # the directory above the work dir, no wildcard
        f"Edit(/{work.parent}/**)",
        "Write",  # a bare tool name
        "Edit(**)",
        "Write(notes)",  # a directory inside: covers its subtree
        "Write(/)",  # the whole work dir
        "Write(a.txt)",  # floats: any a.txt at any depth
        "Write(notes/../../x)",
        "Write(~/notes/a.txt)",
        "Bash(cat:*)",
    ]


async def test_the_write_call_is_offered_its_folder(work: Path) -> None:
    agent = await _paused(work, _write(work))
    pending = agent.state.pending
    assert pending is not None
    assert [str(r) for r in pending.awaiting_confirmation[0].suggested_rules] == ["Edit(notes/**)"]


@pytest.mark.parametrize("index", range(10))
async def test_a_smuggled_path_rule_is_refused_and_nothing_changes(work: Path, index: int) -> None:
    agent = await _paused(work, _write(work))
    rule = PermissionRule.parse(_smuggled(work)[index])
    before = agent.state.model_dump_json()
    with pytest.raises(RuleTooBroadError, match="w1") as caught:
        await agent.reply(_confirm(agent, [rule]))
    assert isinstance(caught.value, ResumeError)
    assert "suggested" in str(caught.value)
    assert agent.state.model_dump_json() == before
    assert not (work / "notes" / "a.txt").exists()


@pytest.mark.parametrize(
    "rule",
    [
        "Edit(notes/**)",
        "Edit(notes/sub/**)",
        "Write(notes/**)",
        "Write(notes/a.txt)",
        "Write(/notes)",
    ]
    + ["Write(/notes/a.txt)", "Edit(notes/*.txt)"],
)
async def test_the_suggested_rule_and_narrower_ones_are_accepted(work: Path, rule: str) -> None:
    agent = await _paused(work, _write(work))
    accepted = PermissionRule.parse(rule)
    await agent.reply(_confirm(agent, [accepted]))
    assert accepted in agent.state.permission_context.allow_rules
    assert (work / "notes" / "a.txt").read_text() == "x"


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ("Bash(git:*)", "prefix wider"),
        ("Bash", "bare tool name"),
        ("Bash(git pu:*)", "prefix wider"),
        ("Bash(*)", "wildcards"),
        ("Bash(git log)", "does not match"),
    ],
)
async def test_a_wider_bash_rule_is_refused_with_its_reason(
    work: Path, rule: str, reason: str
) -> None:
    agent = await _paused(work, call("Bash", {"command": "git push origin main"}, id="b1"))
    before = agent.state.model_dump_json()
    with pytest.raises(RuleTooBroadError, match=reason):
        await agent.reply(_confirm(agent, [PermissionRule.parse(rule)]))
    assert agent.state.model_dump_json() == before


@pytest.mark.parametrize(
    "rule", ["Bash(git push:*)", "Bash(git push origin:*)", "Bash(git push origin main)"]
)
async def test_a_narrower_bash_rule_is_accepted(work: Path, rule: str) -> None:
    agent = await _paused(work, call("Bash", {"command": "git push origin main"}, id="b1"))
    accepted = PermissionRule.parse(rule)
    await agent.reply(_confirm(agent, [accepted]))
    assert accepted in agent.state.permission_context.allow_rules


async def test_a_sed_call_is_offered_only_its_exact_command(work: Path) -> None:
    (work / "a.txt").write_text("a\n")
    agent = await _paused(work, call("Bash", {"command": "sed -n 1,5p a.txt"}, id="s1"))
    pending = agent.state.pending
    assert pending is not None
    (offered,) = pending.awaiting_confirmation[0].suggested_rules
    assert offered.rule_content == "sed -n 1,5p a.txt"
    with pytest.raises(RuleTooBroadError):
        await agent.reply(_confirm(agent, [PermissionRule.parse("Bash(sed:*)")]))


def test_the_error_is_a_422_over_http() -> None:
    pytest.importorskip("fastapi")
    from tether.app.server._problems import status_of

    assert status_of(RuleTooBroadError("x")) == 422
    assert status_of(ResumeError("x")) == 409
