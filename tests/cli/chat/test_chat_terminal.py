"""`tether chat` driven as a person would: keystrokes in, the screen asserted."""

from __future__ import annotations

from pathlib import Path


def test_streamed_answer_with_thinking_folded(terminal, script) -> None:
    model = script(
        [{"thinking": "The user says hello; greet back.", "text": "Hello! I am **tether**."}]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("hi there")
    screen = term.wait_for(r"Hello! I am tether\.")
    assert "✻ thought for 6 words" in screen
    assert "The user says hello" not in screen  # folded away once it ended
    term.prompt_ready(2)
    term.ctrl("d")
    assert term.wait_exit() == 0


def test_always_allows_the_next_matching_call(terminal, script, project: Path) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch one.txt"}}]},
            {"text": "Made one."},
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch two.txt"}}]},
            {"text": "Made two."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make one")
    screen = term.wait_for(r"\[e\]dit")
    assert "Allow Bash touch one.txt? [y]es / [a]lways (Bash(touch:*))" in screen
    term.type("a")
    term.wait_for("Made one.")
    term.prompt_ready(2)
    term.type("make two")
    term.wait_for("Made two.")
    assert term.count(r"Allow Bash") == 1
    assert (project / "one.txt").exists() and (project / "two.txt").exists()
    term.ctrl("d")
    assert term.wait_exit() == 0
