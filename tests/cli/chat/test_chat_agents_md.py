"""AGENTS.md in the system prompt of a trusted folder only; `/context` and `/init`."""

from __future__ import annotations

from pathlib import Path

import pytest
from terminal import chat_env

from tether.cli import main
from tether.cli.chat import _main
from tether.model import ScriptedChatModel


@pytest.fixture
def repo(tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "AGENTS.md").write_text("Run the tests with `make check`.\n")
    (root / "CLAUDE.md").write_text("Not read: there is an AGENTS.md.\n")
    (root / "pkg" / "CLAUDE.md").write_text("In pkg, use tabs.\n")
    user = home / ".config" / "tether" / "AGENTS.md"
    user.parent.mkdir(parents=True)
    user.write_text("The user prefers short answers.\n")
    for key, value in chat_env(home).items():
        monkeypatch.setenv(key, value)
    monkeypatch.chdir(root / "pkg")
    return root


def _system_prompt(monkeypatch: pytest.MonkeyPatch, *flags: str) -> str:
    """Run `tether chat -p` in-process; the scripted model records the request it got."""
    model = ScriptedChatModel(["ok"])
    monkeypatch.setattr(_main, "resolve_model", lambda flag, configured: (model, "scripted:x"))
    assert main(["chat", "-p", "hi", *flags]) == 0
    return str(model.calls[0].messages[0].get_text_content())


def test_agents_md_only_in_a_trusted_folder(repo, monkeypatch, capsys) -> None:
    untrusted = _system_prompt(monkeypatch)
    assert "The user prefers short answers." in untrusted  # the user's own file: everywhere
    assert "make check" not in untrusted and "tabs" not in untrusted
    assert "instruction file 'AGENTS.md'" in capsys.readouterr().err
    trusted = _system_prompt(monkeypatch, "--trust-folder")
    assert "## ~/.config/tether/AGENTS.md\nThe user prefers short answers." in trusted
    assert "## AGENTS.md\nRun the tests with `make check`." in trusted
    assert "## pkg/CLAUDE.md\nIn pkg, use tabs." in trusted  # no AGENTS.md in pkg/
    assert "Not read" not in trusted
    assert "read the nearest AGENTS.md" in trusted  # deeper files are named, not read


def test_context_lists_it_and_init_writes_a_starter(terminal, script, project, home) -> None:
    (project / ".git").mkdir()
    term = terminal("--model", script([]))
    term.prompt_ready(1)
    term.type("/init")
    term.wait_for("wrote .*AGENTS.md: a starter to fill in")
    term.wait_for("this folder is not trusted: it is read once you trust it")
    assert (project / "AGENTS.md").read_text().startswith("# AGENTS.md")
    term.prompt_ready(2)
    term.type("/init")
    term.wait_for("AGENTS.md exists already; edit it")
    assert term.leave() == 0
    trusted = terminal("--model", script([]), "--trust-folder")
    trusted.prompt_ready(1)
    trusted.type("/context")
    trusted.wait_for(r"of which instructions:\n +AGENTS\.md  \d+ tokens")
    assert trusted.leave() == 0
