r"""Issue 13, item 2 end to end: a symlink named `d<CR>x` that leads to `~/.aws`.

Before the fix `cat d<CR>x/credentials` was auto-allowed and printed the key.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_run import run_call

from tether.tool import Bash

SECRET = "aws_secret_access_key=AKIAEXAMPLE"


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".aws").mkdir(parents=True)
    (home / ".aws" / "credentials").write_text(SECRET + "\n")
    monkeypatch.setenv("HOME", str(home))
    path = tmp_path / "work"
    path.mkdir()
    (path / "d\rx").symlink_to(home / ".aws")
    return path


@pytest.mark.parametrize(
    "command", ["cat d\rx/credentials", "cd d\rx && cat credentials", "cat d\vx/credentials"]
)
async def test_a_cr_in_a_name_does_not_read_past_the_work_dir(work, command):
    outcome = await run_call(Bash(), {"command": command}, work)
    assert outcome.asked
    assert SECRET not in outcome.output
