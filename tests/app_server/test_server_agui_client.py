"""AG-UI's own JS client (`@ag-ui/client`'s `HttpAgent`, pinned) against `tether serve`.

Its event verifier rejects any out-of-order stream, so every scenario passing means
every stream was valid. Skipped without Node or the client (`tests/protocols/install.sh`
installs it); required when `TETHER_REQUIRE_NODE` is set.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from svc_team import Served, serve_team

from _protocols import MODULES, node_with

if TYPE_CHECKING:
    pass


ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "protocols" / "agui_client.mjs"


@pytest.fixture
def live_team(backend: Any, test_dir: Path) -> Iterator[Served]:
    """The service serving `planner` and the sub-agent `team`."""
    with serve_team(backend, test_dir, planner=True) as served:
        yield served


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_agui_client_scenarios(live_team: Served, tmp_path: Path) -> None:
    live = live_team
    node = node_with("@ag-ui/client")
    script = MODULES.parent / "agui_client.mjs"  # beside node_modules, so imports resolve
    script.write_text(SCRIPT.read_text())
    done = subprocess.run(
        [node, str(script), live.url, "key-alice-0123456789"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    failed = {name: r["error"] for name, r in report.items() if not r["ok"]}
    assert not failed, failed

    text = report["text_and_thinking"]
    assert text["outcome"] == "success" and text["text"] == "hello there "
    assert text["types"].index("REASONING_START") < text["types"].index("TEXT_MESSAGE_START")

    assert sorted(report["two_tool_calls"]["results"]) == ["tick 1", "tick 2"]

    approve = report["interrupt_approve"]
    assert (approve["first"], approve["reason"], approve["second"]) == (
        "interrupt",
        "tool_approval",
        "success",
    )
    assert approve["results"] == ["saved approve"]
    for rejected in ("interrupt_reject", "interrupt_cancel"):
        assert report[rejected]["second"] == "success"
        assert "saved" not in " ".join(report[rejected]["results"])
    assert [line for line in live.runs() if line.startswith("save_note")] == ["save_note approve"]

    team = report["subagents"]
    assert (team["first"], team["interrupt"], team["second"]) == (
        "interrupt",
        "boss1/wri0",
        "success",
    )
    assert team["types"].count("SUBAGENT_STARTED") == 2
    assert team["types"].count("SUBAGENT_FINISHED") == 2
    assert team["secondTypes"].count("SUBAGENT_STARTED") == 1  # the writer continues
    assert team["result"] == "all done"

    front = report["frontend_tool"]
    assert (front["pending"], front["name"], front["args"]) == (1, "set_colour", {"colour": "teal"})
    assert front["second"] == "success" and front["text"] == "colour changed "
