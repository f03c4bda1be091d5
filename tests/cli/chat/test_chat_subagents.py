"""Sub-agents in `tether chat`: `Task`, definitions from trusted folders, nested output."""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.cli.chat._agents import chat_subagents, load_definitions
from tether.errors import ChatConfigError
from tether.model import ScriptedChatModel

DEFINITION = """---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Grep
---
You review code. Report bugs only.
"""


def test_task_asks_naming_itself_and_its_calls_are_indented(terminal, script, project) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Task", "input": {"task": "create sub.txt"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch sub.txt"}}]},
            {"text": "Created sub.txt."},
            {"text": "The sub-agent created it."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make sub.txt with a sub-agent")
    screen = term.wait_for(r"\[e\]dit")
    assert "Task asks: Allow Bash touch sub.txt?" in screen
    assert "↳ Task is working" in screen
    term.type("y")
    screen = term.wait_for("The sub-agent created it.")
    assert "    ● Bash(touch sub.txt)" in screen
    assert (project / "sub.txt").exists()
    assert term.leave() == 0


def test_always_here_and_in_the_parent_spares_the_parent_the_question(
    terminal, script, project
) -> None:
    model = script(
        [
            {"tool_calls": [{"name": "Task", "input": {"task": "create sub.txt"}}]},
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch sub.txt"}}]},
            {"text": "Created sub.txt."},
            {"tool_calls": [{"name": "Bash", "input": {"command": "touch sub.txt"}}]},
            {"text": "Touched it again myself."},
        ]
    )
    term = terminal("--model", model)
    term.prompt_ready(1)
    term.type("make sub.txt with a sub-agent")
    screen = term.wait_for(r"\[p\]arent")
    assert "Task asks: Allow Bash touch sub.txt?" in screen
    term.type("p")
    screen = term.wait_for("Touched it again myself.")
    assert screen.count("Allow Bash touch sub.txt?") == 1  # the parent's own call ran unasked
    assert term.leave() == 0


def test_definitions_load_from_the_user_and_only_trusted_projects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "config"
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    (config / "tether" / "agents").mkdir(parents=True)
    (config / "tether" / "agents" / "helper.md").write_text("---\nname: helper\n---\nYou help.\n")
    project = tmp_path / "project"
    (project / ".tether" / "agents").mkdir(parents=True)
    (project / ".tether" / "agents" / "reviewer.md").write_text(DEFINITION)

    assert [d.name for d in load_definitions(project, trusted=False)] == ["helper"]
    found = load_definitions(project, trusted=True)
    assert [d.name for d in found] == ["helper", "reviewer"]
    reviewer = found[1]
    assert reviewer.tools == ("Read", "Grep") and reviewer.prompt.startswith("You review")

    tools = chat_subagents(found, ScriptedChatModel([]), project, ())
    assert [t.name for t in tools] == ["Task", "helper", "reviewer"]
    assert sorted(tools[2].agent.toolkit.tools) == ["Grep", "Read"]
    assert tools[2].description == "Reviews a change for bugs."


def test_a_bad_definition_is_a_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "none"))
    project = tmp_path / "project"
    (project / ".tether" / "agents").mkdir(parents=True)
    (project / ".tether" / "agents" / "x.md").write_text("no front matter")
    with pytest.raises(ChatConfigError, match="front matter"):
        load_definitions(project, trusted=True)
    (project / ".tether" / "agents" / "x.md").write_text("---\ntools: [Rm]\n---\nhi\n")
    [definition] = load_definitions(project, trusted=True)
    with pytest.raises(ChatConfigError, match="unknown tools"):
        chat_subagents([definition], ScriptedChatModel([]), project, ())
