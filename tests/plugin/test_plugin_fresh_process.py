"""Activation counting when every step of a conversation runs in a new process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

SCRIPT = Path(__file__).with_name("fresh_process_turn.py")


def step(state_file: Path, name: str) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, str(SCRIPT), str(state_file), name],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=SCRIPT.parent,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    report: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return report


def test_rounds_count_once_per_run_when_each_step_is_a_new_process(tmp_path):
    state = tmp_path / "state.json"
    asking = ["activate_plugin", "extend_plugin_activation"]
    note_tools = [*asking, "add_note", "list_notes", "delete_note"]

    woke = step(state, "wake-and-ask")  # wakes the plugin, then pauses on delete_note
    assert woke["last"] == "RequireUserConfirmEvent"
    assert woke["activated"] == ["note"] and woke["plugins"] == {"note": 3}
    assert woke["tools"] == [asking, note_tools] and woke["ran"] == []

    confirmed = step(state, "confirm")  # another process runs the confirmed call
    assert confirmed["ran"] == ["delete_note"]
    assert confirmed["last"] == "ReplyEndEvent"
    assert confirmed["plugins"] == {"note": 3}  # the waking run does not use up a round

    seen = [step(state, f"turn {i}") for i in range(1, 5)]
    assert [s["plugins"] for s in seen] == [{"note": 2}, {"note": 1}, {}, {}]
    assert [s["tools"][0] for s in seen] == [note_tools, note_tools, note_tools, asking]
    assert [s["hint"] for s in seen] == [[False], [False], [True], [False]]
    assert [s["slept"] for s in seen] == [[], [], ["note"], []]
    assert all(s["ran"] == [] for s in seen)
