"""The permission prompt as a single-key menu, in a real terminal."""

from __future__ import annotations

from pathlib import Path

DOWN = "\x1b[B"
UP = "\x1b[A"


def _touch(script, *names: str):
    steps = [{"tool_calls": [{"name": "Bash", "input": {"command": f"touch {n}"}}]} for n in names]
    return script([*steps, {"text": "All done."}])


def test_a_wrong_key_is_explained_then_arrows_and_enter_choose(
    terminal, script, project: Path
) -> None:
    term = terminal("--model", _touch(script, "one.txt", "two.txt"))
    term.prompt_ready(1)
    term.type("make files")
    screen = term.wait_for(r"press y, a, n or e, or ↑/↓ then Enter")
    assert "❯ y  Yes" in screen and "a  Yes, and always allow Bash(touch:*)" in screen
    term.key("x")
    term.wait_for(r"'x' is not an answer here: press y, a, n or e, or ↑/↓ then Enter")
    assert term.count(r"Allow Bash touch one.txt\?") == 1  # explained in place, not re-asked
    term.key(DOWN + DOWN + UP)  # on "always"
    term.wait_for(r"❯ a  Yes, and always")
    term.key("\r")
    term.wait_for(r"❯ Yes, and always allow Bash\(touch:\*\)")
    term.wait_for("All done.")  # the rule covers the second call: asked once
    assert term.count(r"Allow Bash touch") == 1
    assert (project / "one.txt").exists() and (project / "two.txt").exists()
    assert term.leave() == 0


def test_no_then_a_reason_typed_on_its_own_line(terminal, script, project: Path) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch x.txt"}}]},
            {"text": "Understood, I will not."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make x")
    term.wait_for(r"press y, a, n or e")
    term.key("n")
    term.wait_for("Tell it why")
    term.type("not now")
    term.wait_for("Understood, I will not.")
    assert "❯ No, and tell it why" in term.text()
    assert not (project / "x.txt").exists()
    assert term.leave() == 0
