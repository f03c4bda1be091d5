"""The A2A SDK loads with the first A2A request: a service nobody asks over A2A starts
without it (0.4 s of a `tether serve` start's 0.9 s of CPU)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = """
import json, sys
from fastapi.testclient import TestClient
from svc_agents import make_agent
from tether.app.server import create_app
from tether.app.storage import SQLiteStorage

seen = {}
app = create_app({"planner": make_agent()}, SQLiteStorage(sys.argv[1]), allowed_hosts=["127.0.0.1"])
with TestClient(app, base_url="http://127.0.0.1") as client:
    seen["started"] = "a2a" in sys.modules
    assert client.get("/v1/sessions").status_code == 200
    seen["native request"] = "a2a" in sys.modules
    card = client.get("/a2a/planner/.well-known/agent-card.json")
    seen["card"] = card.json()["name"]
    seen["a2a request"] = "a2a" in sys.modules
print(json.dumps(seen))
"""


def test_the_sdk_loads_with_the_first_a2a_request(tmp_path: Path) -> None:
    here = Path(__file__).parent
    out = subprocess.run(
        [sys.executable, "-c", PROBE, str(tmp_path / "s.db")],
        cwd=here,
        env={"PYTHONPATH": f"{here}:{here.parents[1] / 'src'}", "PATH": ""},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {
        "started": False,
        "native request": False,
        "card": "planner",
        "a2a request": True,
    }
