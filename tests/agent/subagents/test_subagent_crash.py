"""SIGKILL at every save point of a reply with sub-agents, the child's save points included.

A worker process runs the parent (two children in parallel, one asking) and kills itself
at save point N, before or after writing it; a second process continues the session to
its end. No child tool runs twice, and none is lost silently: every child call ends with
its result, or with an interrupted one if it was claimed when the process died (as at
depth 0).
"""

from __future__ import annotations

import json
import re
import signal
from pathlib import Path

import pytest
from test_subagents import run_worker, starts

CHILD_CALLS = {"res0": "lookup", "res1": "note", "wri0": "publish"}


def clean_saves(tmp_path: Path) -> int:
    """How many save points a run without a crash reaches (start to end, one pause)."""
    config = {"team": "pair", "log": str(tmp_path / "clean.log"), "state": str(tmp_path / "c.json")}
    done = run_worker(config)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["text"] == "all done [boss0:success boss1:success]"
    return (tmp_path / "clean.log").read_text().count("saved ")


@pytest.mark.long
@pytest.mark.timeout(900)  # two worker processes per save point
@pytest.mark.parametrize("when", ["before", "after"])
def test_sigkill_at_every_save_point_including_the_childrens(tmp_path: Path, when: str) -> None:
    total = clean_saves(tmp_path)
    assert total >= 10  # the children's save points are the parent's
    for n in range(1, total + 1):
        folder = tmp_path / f"{when}{n}"
        folder.mkdir()
        log, state = folder / "tools.log", folder / "state.json"
        config = {"team": "pair", "log": str(log), "state": str(state)}
        crashed = run_worker({**config, "kill_save": n, "kill_when": when})
        assert crashed.returncode == -signal.SIGKILL, (n, crashed.stderr)
        done = run_worker(config)
        assert done.returncode == 0, (n, done.stderr)
        text = json.loads(done.stdout)["text"]
        counts = starts(log)
        assert all(c == 1 for c in counts.values()), (n, counts)  # never twice
        if text is None:  # the crash came after the reply's last save: it had finished
            continue
        assert text.startswith("all done ["), (n, text)
        # Each child's answer (in the parent's tool results) lists how its calls ended.
        final = json.loads(state.read_text())
        outputs = " ".join(
            str(block.get("result", ""))
            for msg in final["context"]
            for block in (msg["content"] if isinstance(msg["content"], list) else [])
            if block.get("type") == "tool_call"
        )
        for call_id, tool in CHILD_CALLS.items():
            found = re.findall(rf"\b{call_id}:(\w+)", outputs)
            assert len(found) == 1, (n, call_id, outputs)
            ran = counts.get(f"{tool} {call_id}", 0)
            if found[0] == "success":
                assert ran == 1, (n, call_id)
            else:
                assert found[0] == "interrupted", (n, call_id, found)
