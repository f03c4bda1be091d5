"""State saved as JSON and loaded in a fresh process continues exactly."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tether.agent import Agent
from tether.errors import StateVersionError
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call

PROGRAM = textwrap.dedent(
    """
    import asyncio, json, sys
    from tether.agent import Agent
    from tether.event import ConfirmResult, UserConfirmResultEvent
    from tether.message import AssistantMsg, UserMsg
    from tether.model import ScriptedChatModel
    from tether.state import AgentState
    from tether.tool import Toolkit, tool

    LOG = sys.argv[2]

    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        '''Deploy.'''
        with open(LOG, "a") as f:
            f.write(f"deploy {target}\\n")
        return f"deployed {target}"

    call = ScriptedChatModel.tool_call
    SCRIPTS = {
        "start": [AssistantMsg("a", [call("deploy", {"target": "prod"}, id="c1")])],
        "confirm": [AssistantMsg("a", "deployed to prod")],
        "again": [AssistantMsg("a", [call("deploy", {"target": "prod"}, id="c2")]),
                  AssistantMsg("a", "deployed again")],
    }

    async def main(step, path):
        state = AgentState.model_validate_json(open(path).read()) if step != "start" else AgentState()
        model = ScriptedChatModel(SCRIPTS[step])
        agent = Agent(name="ops", system_prompt="p", model=model, toolkit=Toolkit(tools=[deploy]), state=state)
        if step == "start":
            msg = await agent.reply(UserMsg("user", "deploy"))
        elif step == "confirm":
            pause = msg_event = json.loads(open(path + ".pause").read())
            tc = state.reply_msg().tool_calls[0]
            msg = await agent.reply(UserConfirmResultEvent(
                reply_id=pause["reply_id"],
                confirm_results=[ConfirmResult(confirmed=True, tool_call=tc, rules=tc.suggested_rules)]))
        else:
            msg = await agent.reply(UserMsg("user", "again"))
        if msg.metadata.get("pause_events"):
            open(path + ".pause", "w").write(json.dumps(msg.metadata["pause_events"][0]))
        open(path, "w").write(agent.state.model_dump_json())
        print(json.dumps({"text": msg.get_text_content(), "calls": len(model.calls),
                          "awaiting": msg.metadata.get("awaiting")}))

    asyncio.run(main(sys.argv[1], sys.argv[3]))
    """
)


def run_step(tmp_path: Path, step: str) -> dict:
    script = tmp_path / "prog.py"
    script.write_text(PROGRAM)
    out = subprocess.run(
        [sys.executable, str(script), step, str(tmp_path / "log"), str(tmp_path / "state.json")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_pause_in_one_process_confirm_in_another(tmp_path: Path) -> None:
    first = run_step(tmp_path, "start")
    assert first["awaiting"] == ["user_confirmation"]
    assert not (tmp_path / "log").exists()
    second = run_step(tmp_path, "confirm")
    assert second["text"] == "deployed to prod"
    assert (tmp_path / "log").read_text() == "deploy prod\n"  # exactly once
    third = run_step(tmp_path, "again")  # the accepted rule persisted: no pause
    assert third["text"] == "deployed again" and third["awaiting"] is None
    assert (tmp_path / "log").read_text() == "deploy prod\ndeploy prod\n"


async def test_saved_state_continues_with_the_same_messages() -> None:
    @tool
    def lookup(key: str) -> str:
        """Look up."""
        return key.upper()

    script = [
        AssistantMsg("a", [call("lookup", {"key": "x"}, id="c1")]),
        AssistantMsg("a", "X it is"),
        AssistantMsg("a", "second answer"),
    ]
    whole = ScriptedChatModel(script)
    agent = Agent(name="bot", system_prompt="p", model=whole, toolkit=Toolkit(tools=[lookup]))
    await agent.reply(UserMsg("user", "one"))
    saved = agent.state.model_dump_json()
    await agent.reply(UserMsg("user", "two"))

    restored = ScriptedChatModel([script[2]])
    again = Agent(
        name="bot",
        system_prompt="p",
        model=restored,
        toolkit=Toolkit(tools=[lookup]),
        state=AgentState.model_validate_json(saved),
    )
    assert again.state == AgentState.model_validate_json(saved)
    await again.reply(UserMsg("user", "two"))

    def strip(value):
        # ids and timestamps of the messages made in each run differ; all else must not
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k not in ("id", "created_at")}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    seen, expected = restored.calls[0].messages, whole.calls[2].messages
    assert len(seen) == len(expected) == 4  # system, user, reply, user (the new reply is empty)
    assert strip([m.model_dump() for m in seen]) == strip([m.model_dump() for m in expected])
    # the history itself (tool call ids included) is identical
    assert [m.model_dump() for m in seen[1:3]] == [m.model_dump() for m in expected[1:3]]


def test_unknown_schema_version_is_rejected() -> None:
    data = json.loads(AgentState().model_dump_json())
    data["schema_version"] = 99
    with pytest.raises(StateVersionError, match="upgrade tether"):
        AgentState.model_validate_json(json.dumps(data))
    data["schema_version"] = "one"
    with pytest.raises(StateVersionError, match="integer"):
        AgentState.model_validate(data)


def test_state_fixture_v1_loads() -> None:
    fixture = Path(__file__).parent / "fixtures" / "state_v1_paused.json"
    state = AgentState.model_validate_json(fixture.read_text())
    assert state.reply is not None and state.reply_msg() is not None
    assert state.reply_msg().tool_calls[0].state == "asking"
