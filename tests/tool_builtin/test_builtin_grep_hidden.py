"""Issue 13, item 3: `Grep` never shows what `Read` could not read without asking.

It searched hidden files, so `.env.production` appeared in its output although `Read` of
that file asks; with the work dir = `$HOME` it printed `~/.ssh/id_rsa`.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from agent_run import run_call

from tether.tool import Bash, Grep
from tether.tool.builtin import find_ripgrep

pytestmark = pytest.mark.skipif(find_ripgrep() is None, reason="ripgrep (`rg`) is not installed")

TOKEN = "TOKEN=s3cret-value"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = Path(os.path.realpath(tmp_path)) / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text(f"PRIVATE KEY {TOKEN}\n")
    (path / "project" / "secret").mkdir(parents=True)
    (path / "project" / ".env.production").write_text(TOKEN + "\n")
    (path / "project" / "secret" / "plan.txt").write_text(TOKEN + "\n")
    (path / "project" / "app.py").write_text(f"# {TOKEN}\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.mark.parametrize("mode", ["files_with_matches", "content", "count"])
async def test_grep_skips_sensitive_files_and_rules(home: Path, mode: str) -> None:
    work = home / "project"
    args = {"pattern": "s3cret", "output_mode": mode}
    outcome = await run_call(Grep(), args, work, deny_rules=["Read(secret/**)"])
    assert not outcome.asked
    assert "app.py" in outcome.output
    assert ".env.production" not in outcome.output
    assert "plan.txt" not in outcome.output
    # With the home dir as the work dir, the private key is skipped too.
    outcome = await run_call(Grep(), args, home)
    assert "app.py" in outcome.output and "id_rsa" not in outcome.output
    assert ".env.production" not in outcome.output


async def test_an_allow_rule_naming_a_file_shows_it(home: Path) -> None:
    work = home / "project"
    args = {"pattern": "s3cret", "output_mode": "content"}
    outcome = await run_call(Grep(), args, work, allow_rules=["Read(.env.production)"])
    assert ".env.production" in outcome.output and TOKEN in outcome.output


async def test_grep_skips_files_with_other_hard_links(home: Path) -> None:
    work = home / "project"
    os.link(home / ".ssh" / "id_rsa", work / "innocent.txt")
    outcome = await run_call(Grep(), {"pattern": "PRIVATE", "output_mode": "content"}, work)
    assert "PRIVATE KEY" not in outcome.output


async def test_bash_grep_through_a_link_out_asks_and_prints_nothing(home: Path) -> None:
    work = home / "project"
    (work / "vendor").symlink_to(home / ".ssh")
    outcome = await run_call(Bash(), {"command": "grep -R PRIVATE ."}, work)
    assert outcome.asked
    assert "PRIVATE KEY" not in outcome.output
