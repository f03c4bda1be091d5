"""Edit diffs against the file (context lines, file line numbers); rule labels from the work dir."""

from __future__ import annotations

import re
from pathlib import Path

CALC = "".join(
    [
        '"""A calculator."""\n',
        "\n",
        "\n",
        *(f"def f{n}(a, b):\n    return a * {n}\n\n\n" for n in range(1, 3)),
        "def add(a, b):\n",
        "    return a - b\n",
        "\n",
        "\n",
        "def sub(a, b):\n",
        "    return a - b\n",
    ]
)


def test_edit_diff_has_file_line_numbers_context_and_indentation(
    terminal, script, project: Path
) -> None:
    (project / "calc.py").write_text(CALC)
    edit = {"file_path": "calc.py", "old_string": "a, b):\n    return a - b\n\n\ndef sub", "new_string": "a, b):\n    return a + b\n\n\ndef sub"}  # fmt: skip
    read = {"name": "Read", "input": {"file_path": "calc.py"}}
    model = script(
        [
            {"tool_calls": [read]},
            {"tool_calls": [{"name": "Edit", "input": edit}]},
            {"text": "Fixed add."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("fix add")
    screen = term.wait_for(r"Allow Edit calc\.py\?")
    lines = CALC.splitlines()
    at = lines.index("def add(a, b):") + 1  # the changed line's number in the file
    expected = [
        *(f"    {n:>2}   {lines[n - 1]}".rstrip() for n in range(at - 2, at + 1)),
        f"    {at + 1:>2} -     return a - b",
        f"    {at + 1:>2} +     return a + b",
        *(f"    {n:>2}   {lines[n - 1]}".rstrip() for n in range(at + 2, at + 5)),
    ]
    shown = screen.splitlines()
    start = shown.index(expected[0])
    assert shown[start : start + len(expected)] == expected
    assert "[a]lways (Edit(./calc.py))" in screen  # relative to the work dir, not the root
    assert "Yes, and always allow Edit(./calc.py)" in screen
    term.key("a")
    term.wait_for("Fixed add.")
    term.prompt_ready(2)
    term.type("/permissions")
    listing = term.wait_for(r"allow: Edit\(\S+\)")
    assert re.search(r"allow: Edit\(/calc\.py\)", listing)  # the stored rule is unchanged
    assert "return a + b" in (project / "calc.py").read_text()
    assert term.leave() == 0


def test_a_snippet_not_in_the_file_is_diffed_alone(terminal, script, project: Path) -> None:
    (project / "notes.md").write_text("alpha\n")
    edit = {"file_path": "notes.md", "old_string": "missing", "new_string": "found"}
    model = script([{"tool_calls": [{"name": "Edit", "input": edit}]}, {"text": "Tried."}])
    term = terminal("--model", model, "--permission-mode", "accept_edits")
    term.prompt_ready(1)
    term.type("edit")
    screen = term.wait_for("Tried.")
    assert "● Edit(notes.md)\n    1 - missing\n    1 + found" in screen
    assert term.leave() == 0
