"""OAuth end to end against the conformance suite's authorization servers (Node 22).

The login runs through the driver (tether's public API); tokens land in a
`FileTokenStore` with mode 0600 and never in the driver's output, debug logs included.
Skipped without the suite (`tests/conformance/run.sh` installs it); required when
`TETHER_REQUIRE_NODE` is set.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / ".ci" / ".mcp-conformance" / "node_modules" / ".bin"
DRIVER = Path(__file__).parent / "driver.py"


def _suite() -> Path:
    tool = BIN / "conformance"
    if not tool.exists():
        if os.environ.get("TETHER_REQUIRE_NODE"):
            pytest.fail("the MCP conformance suite is not installed: run tests/conformance/run.sh")
        pytest.skip("the MCP conformance suite is not installed (tests/conformance/run.sh)")
    return tool


def _run(scenario: str, tmp_path: Path, **extra: str) -> Path:
    tool = _suite()
    out = tmp_path / "results"
    env = {
        **os.environ,
        "PATH": f"{BIN}:{os.environ['PATH']}",
        "TETHER_CONFORMANCE_TOKENS": str(tmp_path / "tokens"),
        "TETHER_CONFORMANCE_DEBUG": "1",
        **extra,
    }
    done = subprocess.run(
        [
            str(tool),
            "client",
            "--scenario",
            scenario,
            "-o",
            str(out),
            "--command",
            f"{sys.executable} {DRIVER}",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return next(out.rglob("checks.json")).parent


@pytest.mark.parametrize("scenario", ["auth/metadata-default", "auth/pre-registration"])
def test_login_stores_tokens_0600_and_never_logs_them(scenario: str, tmp_path: Path) -> None:
    results = _run(scenario, tmp_path)
    files = list((tmp_path / "tokens").glob("*.json"))
    assert len(files) == 1
    assert stat.S_IMODE(files[0].stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "tokens").stat().st_mode) == 0o700
    token = json.loads(files[0].read_text())["tokens"]["access_token"]
    assert len(token) >= 8
    output = (results / "stdout.txt").read_text() + (results / "stderr.txt").read_text()
    assert "DEBUG" in output  # the debug logs were on
    assert token not in output


def test_status_then_a_loopback_login(tmp_path: Path) -> None:
    """`needs login` first; `login()` with a browser that follows the redirect to our
    loopback port; then connected, with the tokens stored."""
    results = _run("auth/metadata-default", tmp_path, TETHER_CONFORMANCE_LOGIN="1")
    output = (results / "stderr.txt").read_text()
    assert "status: needs login" in output and "status: connected" in output
    [stored] = list((tmp_path / "tokens").glob("*.json"))
    token = json.loads(stored.read_text())["tokens"]["access_token"]
    stdout = (results / "stdout.txt").read_text()
    assert "STATE " in stdout and '"state":"success"' in stdout  # an agent used the server
    assert token not in stdout + output
