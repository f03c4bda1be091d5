"""A2A's own JS client (`@a2a-js/sdk`'s `ClientFactory`, pinned) against `tether serve`.

Over JSON-RPC and HTTP+JSON: stream, send, get, list, an `input-required` task answered,
a cancel, and a missing task. Skipped without Node or the client
(`tests/protocols/install.sh` installs it); required when `TETHER_REQUIRE_NODE` is set.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from _protocols import MODULES, node_with

if TYPE_CHECKING:
    from conftest import Live


ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "tests" / "protocols" / "a2a_client.mjs"


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
def test_a2a_js_client_scenarios(live: Live) -> None:
    node = node_with("@a2a-js/sdk")
    script = MODULES.parent / "a2a_client.mjs"  # beside node_modules, so imports resolve
    script.write_text(SCRIPT.read_text())
    done = subprocess.run(
        [node, str(script), live.url, "key-alice-0123456789", str(live.dir)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    failed = {name: r["error"] for name, r in report.items() if not r["ok"]}
    assert not failed, failed
    for binding in ("jsonrpc", "rest"):
        r = report[binding]
        chunks = r["stream"].pop("artifacts")
        assert 1 <= chunks <= 3, "the three words stream in one to three chunks"
        assert r["stream"] == {
            "first": "task",
            "last": "statusUpdate",
            "state": "completed",
            "text": "echo: hello js ",
        }
        sent = r["send_get_list"]
        assert (sent["state"], sent["text"]) == ("completed", "echo: plain send ")
        assert sent["listed"] == sent["ids"]
        asked = r["input_required"]
        assert (asked["first"], asked["second"], asked["sameTask"]) == (
            "input_required",
            "completed",
            True,
        )
        assert asked["question"].startswith("Allow the call to save_note")
        assert asked["text"] == "saved it "
        assert r["cancel"] == {"state": "canceled"}
        assert r["not_found"]["error"].endswith("TaskNotFoundError")
    saved = [line for line in live.runs() if line.startswith("save_note")]
    assert saved == ["save_note jsonrpc", "save_note rest"]
