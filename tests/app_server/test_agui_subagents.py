"""A grandchild over AG-UI: the translator's subagent events for boss → editor → writer,
every one valid by `ag-ui-protocol`, the writer's invocation inside the editor's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ag_ui.core import Event
from pydantic import TypeAdapter
from subagent_svc import StepModel, publish

from tether.agent import Agent
from tether.app.server._agui_events import AguiTranslator
from tether.event import ConfirmResult, UserConfirmResultEvent, event_adapter
from tether.message import UserMsg
from tether.tool import Toolkit

EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def grand_team() -> Agent:
    writer = Agent(
        "writer", "You write.", StepModel("wri", [("publish", '{"text": "d"}')], "written"),
        Toolkit(tools=[publish]),
    )  # fmt: skip
    task = json.dumps({"task": "help"})
    editor = Agent(
        "editor", "You edit.", StepModel("edi", [("writer", task)], "edited"),
        Toolkit(tools=[writer.as_tool()]),
    )  # fmt: skip
    return Agent(
        "boss", "You lead.", StepModel("boss", [("editor", task)], "all done"),
        Toolkit(tools=[editor.as_tool()]),
    )  # fmt: skip


async def translated(agent: Agent, inputs: Any) -> list[Any]:
    translator = AguiTranslator("thread", "run")
    out = []
    async for event in agent.reply_stream(inputs):
        again = event_adapter.validate_json(event.model_dump_json())  # as the log holds it
        for agui in translator.translate(again):
            out.append(EVENT.validate_json(agui.model_dump_json(by_alias=True)))
    assert translator.finished
    return out


def kinds(events: list[Any]) -> list[tuple[str, str | None]]:
    return [
        (e.type.value, getattr(e, "name", None))
        for e in events
        if e.type.value.startswith(("SUBAGENT", "RUN"))
    ]


async def test_a_grandchild_nests_inside_its_parents_invocation(
    tmp_path: Path, monkeypatch: Any
) -> None:
    monkeypatch.setenv("TETHER_TEST_DIR", str(tmp_path))
    agent = grand_team()
    first = await translated(agent, UserMsg("user", "go"))
    assert kinds(first) == [
        ("SUBAGENT_STARTED", "editor"),
        ("SUBAGENT_STARTED", "writer"),
        ("SUBAGENT_FINISHED", None),  # the writer, suspended on its own question
        ("SUBAGENT_FINISHED", None),  # the editor, suspended because of the writer's
        ("RUN_FINISHED", None),
    ]
    editor, writer = [e for e in first if e.type.value == "SUBAGENT_STARTED"]
    assert editor.parent_subagent_run_id is None and editor.parent_tool_call_id == "boss0"
    assert writer.parent_subagent_run_id == editor.subagent_run_id
    assert writer.parent_tool_call_id == "boss0/edi0"
    ends = [e for e in first if e.type.value == "SUBAGENT_FINISHED"]
    assert [e.subagent_run_id for e in ends] == [writer.subagent_run_id, editor.subagent_run_id]
    assert ends[0].outcome.interrupt_ids == ["boss0/edi0/wri0"]
    assert ends[1].outcome.type == "suspended" and not ends[1].outcome.interrupt_ids
    calls = [e for e in first if e.type.value == "TOOL_CALL_START"]
    assert [(c.tool_call_id, c.subagent_run_id) for c in calls] == [
        ("boss0", None),
        ("boss0/edi0", editor.subagent_run_id),
        ("boss0/edi0/wri0", writer.subagent_run_id),
    ]
    (interrupt,) = first[-1].outcome.interrupts
    assert interrupt.subagent_run_id == writer.subagent_run_id
    assert interrupt.metadata["agentPath"] == ["editor", "writer"]

    pause = agent.state.reply
    assert pause is not None
    call = interrupt.tool_call_id
    [asking] = [c for c in (await _pending(agent)) if c.id == call]
    answer = UserConfirmResultEvent(
        reply_id=pause.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=asking)]
    )
    second = await translated(agent, answer)
    assert kinds(second) == [
        ("SUBAGENT_STARTED", "editor"),
        ("SUBAGENT_STARTED", "writer"),
        ("SUBAGENT_FINISHED", None),
        ("SUBAGENT_FINISHED", None),
        ("RUN_FINISHED", None),
    ]
    ids = [e.subagent_run_id for e in second if e.type.value == "SUBAGENT_STARTED"]
    assert ids == [editor.subagent_run_id, writer.subagent_run_id]  # the same invocations
    done = [e for e in second if e.type.value == "SUBAGENT_FINISHED"]
    assert [e.result for e in done] == ["written", "edited"]
    assert second[-1].result == "all done"


async def _pending(agent: Agent) -> list[Any]:
    from tether.agent import pending_calls

    asking, _ = pending_calls(agent.state)
    return asking
