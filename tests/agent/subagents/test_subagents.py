"""Sub-agents (`Agent.as_tool`): nested state, nested events, pauses that bubble up and
resume in a fresh process, permissions that only narrow, limits."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import subagent_team as team

from tether.agent import Agent
from tether.errors import SubAgentDepthError, SubAgentPermissionError
from tether.event import (
    AgentEvent,
    ConfirmResult,
    ReplyEndEvent,
    RequireUserConfirmEvent,
    SubAgentEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
    event_adapter,
)
from tether.message import ToolCallState, ToolResultState, UserMsg
from tether.permission import PermissionContext, PermissionMode
from tether.state import AgentState
from tether.tool import Toolkit

WORKER = str(Path(__file__).with_name("subagent_team.py"))


def starts(log: Path) -> Counter[str]:
    """How often each `<tool> <call id>` started."""
    lines = log.read_text().splitlines() if log.exists() else []
    return Counter(line[len("start ") :] for line in lines if line.startswith("start "))


def run_worker(config: dict[str, Any]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, WORKER, json.dumps(config)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


async def drain(agent: Agent, inputs: Any, saves: list[str]) -> list[AgentEvent]:
    async def checkpoint(state: AgentState) -> None:
        saves.append(state.model_dump_json())

    return [e async for e in agent.reply_stream(inputs, checkpoint=checkpoint)]


async def test_two_children_in_parallel_one_asks_resume_in_a_fresh_process(
    tmp_path: Path,
) -> None:
    log = tmp_path / "tools.log"
    team.LOG["path"] = str(log)
    agent = team.parent()
    saves: list[str] = []
    events = await drain(agent, UserMsg("user", "go"), saves)

    # Both children's events are in the parent's stream, each with its path and call id,
    # each child's own events in their order; every event survives a JSON round trip.
    nested = [e for e in events if isinstance(e, SubAgentEvent)]
    for path, call_id in ((["researcher"], "boss0"), (["writer"], "boss1")):
        own = [e for e in nested if e.agent_path == path]
        assert own and all(e.call_path == [call_id] for e in own)
        assert all(e.reply_id == agent.state.reply.reply_id for e in own)  # type: ignore[union-attr]
        assert own[0].event.type == "reply_start"
    kinds = [e.event.type for e in nested if e.agent_path == ["researcher"]]
    assert kinds[-1] == "reply_end"
    assert [e.event.type for e in nested if e.agent_path == ["writer"]][-1] == (
        "require_user_confirm"
    )
    for event in events:
        assert event_adapter.validate_json(event_adapter.dump_json(event)) == event

    # The parent paused with the writer's call, its id qualified by the parent's call.
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    [asking] = pause.tool_calls
    assert asking.id == "boss1/wri0" and asking.name == "publish"
    assert asking.metadata["agent_path"] == ["writer"]
    assert not any(isinstance(e, ReplyEndEvent) for e in events)
    # The researcher's finished result is kept; the writer's call waits on its child.
    calls = {c.id: c for c in agent.state.reply_msg().tool_calls}  # type: ignore[union-attr]
    assert calls["boss0"].state is ToolCallState.FINISHED
    assert calls["boss1"].state is ToolCallState.SUBMITTED
    assert starts(log) == {"lookup res0": 1, "note res1": 1}

    # Saved, loaded in a fresh process, confirmed there: the reply completes.
    state_file = tmp_path / "state.json"
    state_file.write_text(saves[-1])
    answer = UserConfirmResultEvent(
        reply_id=pause.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=asking)]
    )
    done = run_worker(
        {"team": "pair", "log": str(log), "state": str(state_file),
         "answer": answer.model_dump_json()}
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["text"] == "all done [boss0:success boss1:success]"
    assert starts(log) == {"lookup res0": 1, "note res1": 1, "publish wri0": 1}
    # Usage rolls up: 2 parent steps + 2 researcher steps + 2 writer steps of 10 + 5.
    assert out["usage"]["input_tokens"] == 60 and out["usage"]["output_tokens"] == 30
    final = AgentState.model_validate_json(state_file.read_text())
    assert final.reply is None and "writer" not in final.tool_state


async def test_the_pause_resumes_in_the_same_process_and_usage_rolls_up(tmp_path: Path) -> None:
    team.LOG["path"] = str(tmp_path / "tools.log")
    agent = team.parent()
    events = await drain(agent, UserMsg("user", "go"), [])
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    [call] = pause.tool_calls
    resumed = await drain(
        agent,
        UserConfirmResultEvent(
            reply_id=pause.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=call)]
        ),
        [],
    )
    end = resumed[-1]
    assert isinstance(end, ReplyEndEvent)
    assert end.msg.get_text_content() == "all done [boss0:success boss1:success]"
    writer_end = [
        e for e in resumed if isinstance(e, SubAgentEvent) and e.event.type == "reply_end"
    ]
    assert writer_end and writer_end[0].agent_path == ["writer"]
    assert end.msg.usage is not None and end.msg.usage.input_tokens == 60
    results = {r.id: r for r in end.msg.tool_results}
    assert results["boss1"].get_text() == "draft published [wri0:success]"
    assert starts(tmp_path / "tools.log")["publish wri0"] == 1


async def test_a_grandchild_pauses_and_resumes_in_a_fresh_process(tmp_path: Path) -> None:
    log = tmp_path / "tools.log"
    team.LOG["path"] = str(log)
    agent = team.grand_team()
    saves: list[str] = []
    events = await drain(agent, UserMsg("user", "go"), saves)
    grand = [e for e in events if isinstance(e, SubAgentEvent) and len(e.agent_path) == 2]
    assert grand and all(e.agent_path == ["editor", "writer"] for e in grand)
    assert all(e.call_path == ["boss0", "edi0"] for e in grand)
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    [call] = pause.tool_calls
    assert call.id == "boss0/edi0/wri0" and call.metadata["agent_path"] == ["editor", "writer"]

    state_file = tmp_path / "state.json"
    state_file.write_text(saves[-1])
    answer = UserConfirmResultEvent(
        reply_id=pause.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=call)]
    )
    done = run_worker(
        {"team": "grand", "log": str(log), "state": str(state_file),
         "answer": answer.model_dump_json()}
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["text"] == "all done [boss0:success]"
    assert starts(log) == {"publish wri0": 1}


async def test_a_wrong_qualified_id_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    from tether.errors import ResumeError

    team.LOG["path"] = ""
    agent = team.parent()
    events = await drain(agent, UserMsg("user", "go"), [])
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    before = agent.state.model_dump_json()
    bad = pause.tool_calls[0].model_copy(update={"id": "boss1/nope"})
    with pytest.raises(ResumeError, match="nope"):
        await drain(
            agent,
            UserConfirmResultEvent(
                reply_id=pause.reply_id,
                confirm_results=[ConfirmResult(confirmed=True, tool_call=bad)],
            ),
            [],
        )
    assert agent.state.model_dump_json() == before


async def test_rejecting_the_childs_call_lets_the_child_answer(tmp_path: Path) -> None:
    team.LOG["path"] = str(tmp_path / "tools.log")
    agent = team.parent(team.writer())
    events = await drain(agent, UserMsg("user", "go"), [])
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    resumed = await drain(
        agent,
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=False, tool_call=pause.tool_calls[0])],
        ),
        [],
    )
    denied = [
        e.event
        for e in resumed
        if isinstance(e, SubAgentEvent) and e.event.type == "tool_result_end"
    ]
    assert denied and denied[0].tool_result.state is ToolResultState.DENIED  # type: ignore[union-attr]
    assert isinstance(resumed[-1], ReplyEndEvent)
    assert "publish wri0" not in starts(tmp_path / "tools.log")


async def test_interrupting_the_paused_parent_ends_the_child_too() -> None:
    team.LOG["path"] = ""
    agent = team.parent(team.writer())
    events = await drain(agent, UserMsg("user", "go"), [])
    pause = events[-1]
    end = await drain(agent, UserInterruptEvent(reply_id=pause.reply_id), [])
    assert isinstance(end[-1], ReplyEndEvent)
    [result] = end[-1].msg.tool_results
    assert result.state is ToolResultState.INTERRUPTED
    assert agent.state.reply is None and not agent.state.tool_state.get("writer")


async def test_a_child_may_not_run_in_a_wider_mode_than_its_parent() -> None:
    team.LOG["path"] = ""
    kid = team.researcher()
    boss = team.parent(kid)
    boss.toolkit = Toolkit(tools=[kid.as_tool(permission_mode="bypass")])
    boss.state = AgentState(permission_context=PermissionContext(mode=PermissionMode.DEFAULT))
    with pytest.raises(SubAgentPermissionError, match="wider than its parent's 'default'"):
        await boss.reply(UserMsg("user", "go"))

    # A mode set on the child's own state is checked the same way.
    kid.state = AgentState(permission_context=PermissionContext(mode=PermissionMode.ACCEPT_EDITS))
    boss = team.parent(kid)
    boss.state = AgentState(permission_context=PermissionContext(mode=PermissionMode.EXPLORE))
    with pytest.raises(SubAgentPermissionError, match="'accept_edits'"):
        await boss.reply(UserMsg("user", "go"))


async def test_a_child_inherits_the_parents_mode_deny_rules_and_work_dirs(tmp_path: Path) -> None:
    team.LOG["path"] = str(tmp_path / "tools.log")
    kid = team.researcher()
    boss = team.parent(kid)
    boss.state = AgentState(
        permission_context=PermissionContext(
            mode=PermissionMode.DEFAULT,
            deny_rules=["note"],
            working_directories=[str(tmp_path)],
        )
    )
    events = await drain(boss, UserMsg("user", "go"), [])
    results = [
        e.event.tool_result  # type: ignore[union-attr]
        for e in events
        if isinstance(e, SubAgentEvent) and e.event.type == "tool_result_end"
    ]
    by_name = {r.name: r for r in results}
    assert by_name["note"].state is ToolResultState.DENIED
    assert by_name["lookup"].state is ToolResultState.SUCCESS
    assert "note res1" not in starts(tmp_path / "tools.log")

    # Narrower work dirs are kept; wider ones are refused.
    kid.state = AgentState(
        permission_context=PermissionContext(working_directories=[str(tmp_path.parent)])
    )
    boss = team.parent(kid)
    boss.state = AgentState(
        permission_context=PermissionContext(working_directories=[str(tmp_path)])
    )
    with pytest.raises(SubAgentPermissionError, match="outside its parent's"):
        await boss.reply(UserMsg("user", "go"))


async def test_nesting_deeper_than_the_limit_is_a_typed_error() -> None:
    team.LOG["path"] = ""
    editor_model = team.RuleModel("edi", [("writer", '{"task": "w"}')], "edited")
    editor = Agent(
        "editor", "You edit.", editor_model, Toolkit(tools=[team.writer().as_tool(max_depth=1)])
    )
    boss = team.parent(editor)
    with pytest.raises(SubAgentDepthError, match="depth 2"):
        await boss.reply(UserMsg("user", "go"))


async def test_a_checkpoint_failing_inside_a_child_stops_the_parent() -> None:
    team.LOG["path"] = ""
    boss = team.parent(team.researcher())
    saved: list[str] = []

    class Conflict(Exception):
        pass

    async def checkpoint(state: AgentState) -> None:
        if len(saved) == 3:  # the child's first save point
            raise Conflict("another worker advanced the session")
        saved.append(state.model_dump_json())

    with pytest.raises(Conflict):
        await boss.reply(UserMsg("user", "go"), checkpoint=checkpoint)
    assert boss.state.model_dump_json() == saved[-1]


async def test_children_run_concurrently_and_results_keep_the_call_order() -> None:
    import asyncio

    from tether.tool import tool

    both = asyncio.Event()
    arrived: list[str] = []

    @tool(is_concurrency_safe=True, is_read_only=True)
    async def meet(who: str) -> str:
        """Wait until both children are here (only possible if they run at once)."""
        arrived.append(who)
        if len(arrived) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), timeout=10)
        return f"{who} met"

    def kid(name: str) -> Agent:
        model = team.RuleModel(name[:3], [("meet", json.dumps({"who": name}))], f"{name} ok")
        return Agent(name, "You meet.", model, Toolkit(tools=[meet]))

    boss = team.parent(kid("first"), kid("second"))
    msg = await boss.reply(UserMsg("user", "go"))
    assert [r.id for r in msg.tool_results] == ["boss0", "boss1"]
    assert [r.get_text() for r in msg.tool_results] == [
        "first ok [fir0:success]",
        "second ok [sec0:success]",
    ]


async def test_closing_the_parents_stream_stops_the_child_at_once() -> None:
    import asyncio

    from tether.tool import tool

    started, cancelled = asyncio.Event(), asyncio.Event()

    @tool(is_read_only=True)
    async def slow() -> str:
        """Never finishes on its own."""
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.set()
            raise
        return "never"

    kid = Agent("sleeper", "s", team.RuleModel("sle", [("slow", "{}")], "x"), Toolkit(tools=[slow]))
    boss = team.parent(kid)
    stream = boss.reply_stream(UserMsg("user", "go"))
    async for event in stream:
        if isinstance(event, SubAgentEvent) and event.event.type == "tool_result_start":
            break
    await asyncio.wait_for(started.wait(), timeout=10)
    await stream.aclose()  # type: ignore[attr-defined]
    assert cancelled.is_set()
    [result] = boss.state.reply_msg().tool_results  # type: ignore[union-attr]
    assert result.id == "boss0" and result.state is ToolResultState.INTERRUPTED
