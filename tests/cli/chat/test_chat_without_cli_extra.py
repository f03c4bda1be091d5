"""`tether chat` in a terminal without the `cli` extra: one line naming the extra, exit 2."""

from __future__ import annotations

import sys
from pathlib import Path

import pexpect
from terminal import chat_env

HIDE_PROMPT_TOOLKIT = """
import sys
from importlib.abc import MetaPathFinder

class Hide(MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "prompt_toolkit":
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None

sys.meta_path.insert(0, Hide())
from tether.cli import main
sys.exit(main())
"""


def test_a_missing_cli_extra_is_one_line_and_exit_2(home: Path, project: Path, tmp_path: Path):
    script = tmp_path / "script.json"
    script.write_text('[{"text": "never"}]')
    child = pexpect.spawn(
        sys.executable,
        ["-c", HIDE_PROMPT_TOOLKIT, "chat", "--model", f"scripted:{script}"],
        cwd=str(project),
        env=chat_env(home),
        encoding="utf-8",
    )
    output = child.read()
    child.close()
    lines = [line for line in output.splitlines() if line.strip()]
    assert child.exitstatus == 2, output
    assert lines == [
        "tether chat: the interactive `tether chat` needs the 'prompt_toolkit' package; "
        "install it with `pip install 'tether[cli]'`"
    ]
