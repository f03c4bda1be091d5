"""Typing ahead while a reply runs: lines are queued, shown as queued, sent when it ends."""

from __future__ import annotations

from pathlib import Path

WAIT = "while [ ! -e release.flag ]; do sleep 0.05; done; echo released"


def test_lines_typed_during_a_reply_are_queued_and_sent_after(
    terminal, script, project: Path
) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": WAIT}}]},
            {"text": "First reply done."},
            {"text": "Second reply done."},
            {"text": "Third reply done."},
        ]
    )
    term = terminal("--model", model, "--permission-mode", "bypass")
    term.prompt_ready(1)
    term.type("start")
    term.wait_for(r"● Bash")
    term.key("second o")
    term.wait_for("› second o▏")  # drawn as it is typed, below the running call
    term.key("ne\r")
    term.wait_for("⧗ queued: second one")
    term.key("third\r/co\x7fos")  # a typo erased; the last line is not sent yet
    term.wait_for("⧗ queued: third")
    assert "First reply done." not in term.text()  # the reply is still running
    (project / "release.flag").touch()
    term.wait_for("Third reply done.")
    screen = term.wait_for(r"(?m)^> /cos$")  # the unfinished line is back in the input line
    lines = screen.splitlines()
    order = [
        lines.index("First reply done."),
        lines.index("> second one"),
        lines.index("Second reply done."),
        lines.index("> third"),
        lines.index("Third reply done."),
    ]
    assert order == sorted(order)
    term.key("t\r")
    term.wait_for("this session:")  # the finished line ran as a command
    assert term.leave() == 0


def test_keys_become_lines_and_escape_sequences_are_dropped() -> None:
    from tether.cli.chat._typeahead import TypeAhead

    shown: list[str] = []
    typed: list[str] = []
    ahead = TypeAhead(shown.append, typed.append)
    ahead.feed("ab\x1b[Ac\x7fd\r  \r\x1bOBx\x15yz")  # up arrow, erase, blank line, Ctrl+U
    assert ahead.queued == shown == ["abd"]
    assert typed == ["yz"]  # one redraw per read: the line as it stands after it
    ahead.feed("\x7f")
    ahead.feed("\r")
    assert typed == ["yz", "y", ""] and ahead.queued == ["abd", "y"]
    ahead.feed("next")
    assert ahead.take_pending() == "next" and ahead.pending == ""
