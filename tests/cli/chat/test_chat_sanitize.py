"""Terminal output that cannot drive the terminal (issue 30): a pty screen read with pyte."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pexpect
import pytest
from terminal import LAUNCH, Terminal, chat_env

from tether.cli._sanitize import json_visible, visible

OSC52 = "\x1b]52;c;ZXZpbA==\x07"
OSC8 = "\x1b]8;;http://evil.example/\x07link\x1b]8;;\x07"
CSI = "\x1b[2J\x1b[H\x1b[31m"
C1 = "\x9b2J\x9d0;c1-title\x9c"
BIDI = "abc\u202eevil\u2066x\u2069"
OSC0_OPEN = "\x1b]0;pwned-title"  # never terminated: would swallow what follows
PAYLOAD = f"<{OSC52}|{OSC8}|{CSI}|{C1}|{BIDI}|{OSC0_OPEN}>"


def test_visible_renders_every_control_and_keeps_newlines_and_tabs() -> None:
    shown = visible(PAYLOAD + "\r\nnext\tcol\rover\x7f")
    assert "\x1b" not in shown and "\x07" not in shown and "\x9b" not in shown
    assert "\u202e" not in shown and "\u2066" not in shown
    assert "␛]52;c;ZXZpbA==␇" in shown and "\\x9b2J" in shown and "abc\\u202eevil" in shown
    assert shown.endswith("␛]0;pwned-title>\nnext\tcol␍over␡")


def test_json_visible_is_the_same_json() -> None:
    encoded = json.dumps({"t": PAYLOAD}, ensure_ascii=False)
    safe = json_visible(encoded)
    assert json.loads(safe) == {"t": PAYLOAD}
    assert "\x9b" not in safe and "\u202e" not in safe and "\x1b" not in safe


class _Recording(Terminal):
    """A terminal that also keeps every raw byte the program wrote."""

    raw = b""

    def _pump(self, timeout: float) -> bool:
        try:
            data = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return True
        except pexpect.EOF:
            return False
        self.raw += data
        self.stream.feed(data)
        return True


def _script(path: Path, steps: list[dict]) -> str:
    path.write_text(json.dumps(steps))
    return f"scripted:{path}"


@pytest.fixture
def hostile_files(project: Path) -> str:
    (project / "evil.txt").write_text(f"file {PAYLOAD} end\n")
    name = "name\x1b]0;file-title\x07\x1b[2J\u202eexe.txt"
    (project / name).write_text("x")
    return name


def test_nothing_reaches_the_terminal_raw(tmp_path, home, project, hostile_files) -> None:
    model = _script(
        tmp_path / "script.json",
        [
            {
                "text": f"model {PAYLOAD} and [click](http://evil.example/)",
                "tool_calls": [{"name": "Bash", "input": {"command": "cat evil.txt"}}],
            },
            {"tool_calls": [{"name": "Glob", "input": {"pattern": "name*"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "ls"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": f"touch '{PAYLOAD}'"}}]},
            {"text": "after"},
        ],
    )
    term = _Recording(
        ["--model", model, "--allow", "Bash(cat:*)"], project, chat_env(home), cols=400
    )
    try:
        term.prompt_ready(1)
        term.type("go")
        screen = term.wait_for(r"Allow Bash touch")
        term.key("y")
        term.wait_for("after")
        screen = "\n".join(term.transcript())
        assert term.leave() == 0
    finally:
        term.close()
    assert term.screen.title == ""  # no OSC 0 took effect, nor the C1 form
    assert "tether chat · session" in screen  # ESC[2J cleared nothing
    for source in ("model <", "file <", "│ file <", "Allow Bash touch '<"):
        assert source in screen
    assert screen.count("␛]52;c;ZXZpbA==␇") >= 4  # model text, file, call line, question
    assert "\\x9b2J\\x9d0;c1-title\\x9c" in screen
    assert "abc\\u202eevil\\u2066x\\u2069" in screen
    # The file name, from ls (Glob's one-line summary is cut after the tmp path, whose
    # length depends on where the test runs).
    assert "name␛]0;file-title␇␛[2J\\u202eexe.txt" in screen
    assert "click (http://evil.example/)" in screen  # a Markdown link shows its address
    assert " ? tether asks · permission for call " in screen
    for raw in (b"\x1b]", b"\xc2\x9b", b"\xc2\x9d", "\u202e".encode(), b"\x1b[2J"):
        assert raw not in term.raw  # no OSC of any kind, no C1, no bidi, no clear


def test_headless_text_is_visible_and_json_exact(tmp_path, home, project) -> None:
    model = _script(tmp_path / "s.json", [{"text": PAYLOAD}])
    run = [sys.executable, "-c", LAUNCH, "chat", "-p", "go", "--model", model]
    text = subprocess.run(run, cwd=project, env=chat_env(home), capture_output=True, timeout=60)
    assert text.returncode == 0
    assert b"\x1b" not in text.stdout and b"\xc2\x9b" not in text.stdout
    assert text.stdout.decode() == visible(PAYLOAD) + "\n"
    model = _script(tmp_path / "j.json", [{"text": PAYLOAD}])
    for output_format in ("json", "stream-json"):
        run = [sys.executable, "-c", LAUNCH, "chat", "-p", "go", "--model", model,
               "--output-format", output_format]  # fmt: skip
        done = subprocess.run(run, cwd=project, env=chat_env(home), capture_output=True, timeout=60)
        assert done.returncode == 0
        assert not any(b in done.stdout for b in (b"\x1b", b"\xc2\x9b", "\u202e".encode()))
        last = json.loads(done.stdout.decode().splitlines()[-1])
        if output_format == "json":
            assert last["result"] == PAYLOAD  # exact once decoded
        model = _script(tmp_path / "j2.json", [{"text": PAYLOAD}])
