"""A paused reply's span, and its resume in a fresh process linking back to it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from obs_helpers import RAN, pausing_agent

from tether.event import ConfirmResult, RequireUserConfirmEvent, UserConfirmResultEvent
from tether.message import AssistantMsg, UserMsg

HERE = Path(__file__).parent


async def test_pause_then_resume_in_a_fresh_process_links_the_spans(telemetry, tmp_path) -> None:
    RAN.clear()
    agent = pausing_agent(telemetry.middleware(), None, resumed=False)
    events = [e async for e in agent.reply_stream(UserMsg("user", "delete a.txt"))]
    assert isinstance(events[-1], RequireUserConfirmEvent)
    paused = telemetry.one("invoke_agent bot")
    assert paused.attributes["tether.reply.outcome"] == "paused"
    assert list(paused.attributes["tether.pause.kind"]) == ["user_confirm"]
    assert paused.status.is_unset  # a pause is not an error
    pause_events = [e for e in paused.events if e.name == "tether.pause"]
    assert [list(e.attributes["gen_ai.tool.call.id"]) for e in pause_events] == [["d1"]]
    assert [e.name for e in paused.events].count("tether.permission.ask") == 1
    assert not telemetry.named("execute_tool delete")  # nothing ran yet
    counted = telemetry.points("tether.reply.pauses")
    assert [(a["tether.pause.kind"], p.value) for a, p in counted] == [("user_confirm", 1)]

    saved = tmp_path / "state.json"
    saved.write_text(agent.state.model_dump_json(), encoding="utf-8")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(HERE), os.environ.get("PYTHONPATH", "")]),
    }
    out = subprocess.run(
        [sys.executable, str(HERE / "resume_child.py"), str(saved)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    child = json.loads(out.stdout)
    assert child["text"] == "deleted it" and child["ran"] == ["a.txt"]
    spans = {s["name"]: s for s in child["spans"]}
    assert sorted(spans) == ["chat scripted", "execute_tool delete", "invoke_agent bot"]
    resumed = spans["invoke_agent bot"]
    assert resumed["attributes"]["tether.reply.resumed"] is True
    assert resumed["attributes"]["tether.resume.kind"] == "user_confirm"
    assert resumed["attributes"]["tether.reply.outcome"] == "finished"
    assert resumed["attributes"]["tether.reply.id"] == paused.attributes["tether.reply.id"]
    assert resumed["links"] == [
        {
            "trace_id": format(paused.context.trace_id, "032x"),
            "span_id": format(paused.context.span_id, "016x"),
            "attributes": {"tether.link.kind": "resumes"},
        }
    ]
    tool_span = spans["execute_tool delete"]
    assert tool_span["parent"] == resumed["span_id"]
    assert tool_span["attributes"]["tether.permission.behavior"] == "ask"
    assert tool_span["attributes"]["tether.permission.confirmed"] is True
    assert spans["chat scripted"]["parent"] == resumed["span_id"]


async def test_a_call_rejected_on_resume_gets_a_settled_tool_span(telemetry) -> None:
    RAN.clear()
    agent = pausing_agent(telemetry.middleware(), None, resumed=False)
    pause = (await agent.reply(UserMsg("user", "delete a.txt"))).metadata["pause_events"][0]
    agent.model.responses.append(AssistantMsg("a", "fine, kept it"))
    call = agent.state.reply_msg().tool_calls[0]
    reject = UserConfirmResultEvent(
        reply_id=pause["reply_id"], confirm_results=[ConfirmResult(confirmed=False, tool_call=call)]
    )
    msg = await agent.reply(reject)
    assert msg.get_text_content() == "fine, kept it" and RAN == []
    first, second = sorted(telemetry.named("invoke_agent bot"), key=lambda s: s.start_time)
    assert [link.context.span_id for link in second.links] == [first.context.span_id]
    settled = telemetry.one("execute_tool delete")
    assert settled.parent.span_id == second.context.span_id
    assert settled.attributes["tether.tool.settled_by"] == "resume"
    assert settled.attributes["tether.tool.outcome"] == "denied"
    assert settled.attributes["tether.permission.confirmed"] is False


async def test_an_external_call_pauses_and_its_outside_result_is_a_settled_span(telemetry) -> None:
    from tether.agent import Agent
    from tether.event import ExternalExecutionResultEvent, RequireExternalExecutionEvent
    from tether.message import ToolResultBlock
    from tether.model import ScriptedChatModel
    from tether.tool import Toolkit, tool

    @tool(is_external_tool=True)
    def click(selector: str) -> str:
        """Click in the user's browser."""
        raise AssertionError("runs outside")

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [ScriptedChatModel.tool_call("click", {"selector": "#go"}, id="x1")]),
            AssistantMsg("a", "clicked"),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[click]),
        middlewares=[telemetry.middleware()],
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "click go"))]
    assert isinstance(events[-1], RequireExternalExecutionEvent)
    done = ExternalExecutionResultEvent(
        reply_id=events[-1].reply_id,
        execution_results=[ToolResultBlock(id="x1", name="click", output="ok")],
    )
    assert (await agent.reply(done)).get_text_content() == "clicked"
    first, second = sorted(telemetry.named("invoke_agent bot"), key=lambda s: s.start_time)
    assert list(first.attributes["tether.pause.kind"]) == ["external_execution"]
    assert second.attributes["tether.resume.kind"] == "external_execution"
    settled = telemetry.one("execute_tool click")
    assert settled.parent.span_id == second.context.span_id
    assert settled.attributes["tether.tool.settled_by"] == "resume"
    assert settled.attributes["tether.tool.outcome"] == "success"
