"""The seed's tools/MCP/skills sample runs against a local MCP server."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

EXAMPLE = Path(__file__).parents[2] / "examples" / "agentscope_compat" / "seed_toolkit.py"


def test_seed_toolkit_example_runs() -> None:
    src = str(Path(__file__).parents[2] / "src")
    env = {**os.environ, "PYTHONPATH": src + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run(
        [sys.executable, str(EXAMPLE)], capture_output=True, text=True, env=env, timeout=100
    )
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines == [
        "[Skill] # Skill: weather",
        "[mcp__amap__maps_weather] Hangzhou: sunny, 21°C",
        "It is sunny and 21°C in Hangzhou.",
    ]
