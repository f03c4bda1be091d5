"""`A2AAgent` against `tether serve`: a parent (in one process) delegates to a second
`tether serve` process's agent over A2A, the remote tool confirmation pauses the parent,
and the parent's saved state is answered in a fresh process (the remote tool runs once);
and a question that crosses two A2A hops (client -> lead service -> planner service)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("a2a.client", reason="a2a-sdk is not installed (pip install 'tether[a2a]')")

from a2a_helpers import a2a_client, message, send, state
from svc_agents import make_agent
from svc_helpers import ProcessServer, ThreadServer, server_env

from tether.agent import A2AAgent, Agent
from tether.app.server import create_app
from tether.app.storage import SQLiteStorage
from tether.credential import A2ACredential
from tether.errors import A2AAuthenticationError
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit

KEY = "key-alice-0123456789"
WORKER = str(Path(__file__).parents[1] / "a2a" / "a2a_parent.py")
NOTE = [[["save_note", {"name": "a", "text": "x"}]], "saved it"]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    keys = tmp_path / "keys.txt"
    keys.write_text(f"{KEY} alice\n")
    work = tmp_path / "work"
    work.mkdir()
    args = ["--agents", "svc_agents:agents", "--storage", f"sqlite:///{tmp_path}/s.db",
            "--api-keys-file", str(keys)]  # fmt: skip
    server = ProcessServer(args, server_env(work), tmp_path / "serve.log").start()
    try:
        yield server.url, work
    finally:
        server.stop()


def worker(config: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, WORKER, json.dumps(config)],
        capture_output=True, text=True, timeout=90, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


def test_a_parent_pauses_on_a_served_agent_and_resumes_in_another_process(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    url, work = served
    saved = tmp_path / "parent.json"
    common = {"url": f"{url}/a2a/planner", "token": KEY, "name": "planner", "state": str(saved)}

    started = worker({**common, "step": "start", "task": json.dumps(NOTE)})

    pause = started["pause"]
    assert pause is not None, started
    [question] = pause["tool_calls"]
    assert question["id"] == "c1/q1" and question["metadata"]["agent_path"] == ["planner"]
    shown = json.loads(question["input"])
    assert "save_note" in shown["question"] and shown["task_state"] == "input-required"
    assert [c["name"] for c in shown["data"]["toolCalls"]] == ["save_note"]
    assert {tuple(map(tuple, n[:2])) for n in started["nested"]} == {(("planner",), ("c1",))}
    assert started["nested"][-1][2] == "require_user_confirm"
    assert not (work / "runs.log").exists()  # nothing ran before the answer

    done = worker({**common, "pause": pause, "approve": True})

    assert done["final"] == "The cleaner is done." and not done["paused"]
    [result] = done["results"]  # the planner's streamed words end with a space
    assert result["output"].strip() == "saved it" and result["state"] == "success"
    assert done["tool_state"] == {}
    assert (work / "runs.log").read_text().splitlines() == ["save_note a"]


async def test_a_question_crosses_two_a2a_hops_and_its_answer_comes_back(
    test_dir: Path, tmp_path: Path
) -> None:
    """client --A2A--> lead service --A2A--> planner service: the planner's confirmation
    is the lead's task's question; "yes" to the lead reaches the planner."""
    keys = {KEY: "alice"}
    planner_app = create_app({"planner": make_agent()}, SQLiteStorage(tmp_path / "p.db"),
                             api_keys=keys)  # fmt: skip
    with ThreadServer(planner_app) as planner:
        remote = A2AAgent(f"{planner.url}/a2a/planner", name="planner",
                          credential=A2ACredential(api_key=KEY))  # fmt: skip
        call = ScriptedChatModel.tool_call("planner", {"task": json.dumps(NOTE)}, id="c1")
        lead = Agent(
            name="lead",
            system_prompt="You delegate.",
            model=ScriptedChatModel([AssistantMsg("lead", [call]), AssistantMsg("lead", "done")]),
            toolkit=Toolkit(tools=[remote.as_tool(read_only=True)]),
        )
        lead_app = create_app({"planner": lead}, SQLiteStorage(tmp_path / "l.db"), api_keys=keys)
        with ThreadServer(lead_app) as front:
            async with a2a_client(front.url) as client:
                task, _ = await send(client, message("tidy up", context_id="chain"))
                assert state(task) == "input_required"
                asked = " ".join(p.text for p in task.status.message.parts if p.text)
                assert "input_required" in asked and "save_note" in asked
                assert not (test_dir / "runs.log").exists()
                done, _ = await send(client, message("yes", task_id=task.id))
    assert state(done) == "completed"
    assert " ".join(p.text for p in done.status.message.parts).strip() == "done"
    assert (test_dir / "runs.log").read_text().splitlines() == ["save_note a"]


async def test_a_key_the_service_does_not_know_is_a_typed_error(tmp_path: Path) -> None:
    app = create_app({"planner": make_agent()}, SQLiteStorage(tmp_path / "p.db"),
                     api_keys={KEY: "alice"})  # fmt: skip
    with ThreadServer(app) as served:
        remote = A2AAgent(f"{served.url}/a2a/planner", credential=A2ACredential(api_key="nope"))
        card = await remote.card()  # the card is public
        assert card.name
        call = ScriptedChatModel.tool_call("planner", {"task": "hi"}, id="c1")
        lead = Agent(
            name="lead",
            system_prompt="You delegate.",
            model=ScriptedChatModel([AssistantMsg("lead", [call])]),
            toolkit=Toolkit(tools=[remote.as_tool(read_only=True)]),
        )
        with pytest.raises(A2AAuthenticationError, match="TETHER_A2A_API_KEY"):
            await lead.reply(UserMsg("user", "go"))
