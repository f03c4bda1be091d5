"""Issue 13, item 1: `--` does not end the option scan where the program does not honour it.

Each case ran on the real `Bash` tool through an `Agent` before the fix and did its
damage without asking; now each pauses for confirmation and the file system is unchanged.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from agent_run import run_call

from tether.permission import PermissionMode
from tether.tool import Bash


@pytest.fixture
def work(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    (path / "a.txt").write_text("b\na\n")
    (path / "victim.txt").write_text("precious\n")
    return path


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes() if p.is_file() else b"<dir>"
        for p in sorted(root.rglob("*"))
    }


CASES = [
    # find honours `--` only before its start points; the expression runs to the end.
    "find -- . -maxdepth 0 -exec rm victim.txt \\;",
    "find -- . -maxdepth 0 -execdir sh -c 'echo x > ../escaped' \\;",
    "find . -name -- -o -name victim.txt -delete",
    "find -H -- . -maxdepth 0 -fprint out",
    # GNU getopt: a value-taking option swallows `--` as its value.
    "sort -T -- -o out a.txt",
    "sort --random-source -- -o victim.txt a.txt",
    "tree -P -- -o out .",
]


@pytest.mark.parametrize("command", CASES)
@pytest.mark.parametrize("mode", [PermissionMode.DEFAULT, PermissionMode.EXPLORE])
async def test_dashdash_does_not_hide_options_end_to_end(work, command, mode):
    before = _snapshot(work.parent)
    outcome = await run_call(Bash(), {"command": command}, work, mode=mode)
    if mode is PermissionMode.DEFAULT:
        assert outcome.asked, outcome.output
    else:
        assert not outcome.asked and "denied" in outcome.output.lower()
    assert _snapshot(work.parent) == before


@pytest.mark.parametrize(
    "command",
    [
        "git diff -S -- --output=out a.txt b.txt",  # outside a repository: --no-index implied
        "git diff --no-index -S -- --output=out a.txt b.txt",
    ],
)
async def test_git_diff_value_swallowing_dashdash_asks_end_to_end(work, command):
    (work / "b.txt").write_text("c\n")
    before = _snapshot(work.parent)
    outcome = await run_call(Bash(), {"command": command}, work)
    assert outcome.asked
    assert _snapshot(work.parent) == before
