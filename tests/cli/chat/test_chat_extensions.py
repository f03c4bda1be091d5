"""Skills folders and plugins from the config file reach the agent."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from terminal import LAUNCH, chat_env

PLUGIN = '''
from tether.plugin import Plugin
from tether.tool import tool


@tool(is_read_only=True)
def shout(text: str) -> str:
    """Shout a text."""
    return text.upper() + "!"


def notes():
    return Plugin("Shouting", "shouting", "Shouts texts.", tools=[shout], allow_sleep=False)
'''


def _run(home: Path, cwd: Path, model: str, **env: str):
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, "chat", "-p", "go", "--model", model, "--trust-folder",
         "--output-format", "stream-json"],
        cwd=cwd, env=chat_env(home, **env), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


def test_skills_folder_from_config(home, project, script) -> None:
    skill = project / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(
        "---\nname: release\ndescription: How to cut a release.\n---\nTag, then push the tag.\n"
    )
    (project / ".tether").mkdir()
    (project / ".tether" / "config.toml").write_text('skills = ["skills"]\n')
    model = script(
        [
            {"tool_calls": [{"name": "Skill", "input": {"name": "release"}}]},
            {"text": "Tag, then push."},
        ]
    )
    events = _run(home, project, model)
    results = [e for e in events if e.get("type") == "tool_result_end"]
    assert results[0]["tool_result"]["state"] == "success"
    assert "Tag, then push the tag." in json.dumps(results[0]["tool_result"]["output"])


def test_plugin_from_config(home, project, script, tmp_path: Path) -> None:
    package = tmp_path / "plugins"
    package.mkdir()
    (package / "loud.py").write_text(PLUGIN)
    (project / ".tether").mkdir()
    (project / ".tether" / "config.toml").write_text('plugins = ["loud:notes"]\n')
    model = script(
        [
            {"tool_calls": [{"name": "shout", "input": {"text": "hi"}}]},
            {"text": "Shouted."},
        ]
    )
    events = _run(
        home,
        project,
        model,
        PYTHONPATH=os.pathsep.join([str(package), os.environ.get("PYTHONPATH", "")]),
    )
    results = [e for e in events if e.get("type") == "tool_result_end"]
    assert results[0]["tool_result"]["state"] == "success"
    assert "HI!" in json.dumps(results[0]["tool_result"]["output"])


def test_bad_plugin_is_one_line(home, project, script) -> None:
    (project / ".tether").mkdir()
    (project / ".tether" / "config.toml").write_text('plugins = ["no_such_module:x"]\n')
    done = subprocess.run(
        [sys.executable, "-c", LAUNCH, "chat", "-p", "go", "--model", script([]), "--trust-folder"],
        cwd=project, env=chat_env(home), capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert done.returncode == 2
    assert "plugin 'no_such_module:x' cannot be loaded" in done.stderr


SLEEPY = PLUGIN.replace(
    "allow_sleep=False)", 'allow_sleep=True, sleep_brief="Shouts texts when woken.")'
)


def test_plugins_command_shows_sleep_and_rounds_left(terminal, script, project, tmp_path) -> None:
    package = tmp_path / "plugins"
    package.mkdir()
    (package / "loud.py").write_text(SLEEPY)
    (project / ".tether").mkdir()
    (project / ".tether" / "config.toml").write_text('plugins = ["loud:notes"]\n')
    model = script(
        [
            {"tool_calls": [{"name": "activate_plugin", "input": {"module_name": "shouting"}}]},
            {"text": "Awake now."},
        ]
    )
    path = os.pathsep.join([str(package), os.environ.get("PYTHONPATH", "")])
    term = terminal(
        "--model", model, "--permission-mode", "bypass", "--trust-folder", PYTHONPATH=path
    )
    term.prompt_ready(1)
    term.type("/plugins")
    term.wait_for("shouting: asleep")
    term.prompt_ready(2)
    term.type("wake the shouting plugin")
    term.wait_for("Awake now.")
    term.prompt_ready(3)
    term.type("/plugins")
    term.wait_for(r"shouting: awake, \d+ rounds left")
    assert term.leave() == 0
