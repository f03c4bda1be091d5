"""Issue 13, item 7 end to end: `git status` with `core.fsmonitor` set runs nothing unasked."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from agent_run import run_call

from tether.tool import Bash

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


async def test_fsmonitor_in_the_repo_config_asks(tmp_path: Path) -> None:
    work = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(work)], check=True)
    pwned = tmp_path / "pwned"
    subprocess.run(
        ["git", "-C", str(work), "config", "core.fsmonitor", f"touch {pwned}; false"], check=True
    )
    outcome = await run_call(Bash(), {"command": "git status"}, work)
    assert outcome.asked
    assert not pwned.exists()
