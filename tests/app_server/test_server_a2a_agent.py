"""`A2AAgent` against a second `tether serve` process: a parent (in one process) delegates
to the service's agent over A2A, the remote tool confirmation pauses the parent, and the
parent's saved state is answered in a fresh process; the remote tool runs once."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("a2a.client", reason="a2a-sdk is not installed (pip install 'tether[a2a]')")

from svc_helpers import ProcessServer, server_env

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
