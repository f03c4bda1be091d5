"""Property tests over generated compound commands: a denied part is never allowed."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from permission_fakes import FakeBash
from permission_workspace import permission_context

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
    check_shell_command,
    match_shell_rule,
)

DENIED = [
    "rm -rf x",
    "/bin/rm x",
    "'rm' x",
    "r\\m x",
    "sudo rm x",
    "RM x",
    "command rm x",
    "xargs rm",
    "rm",
]
ALLOWED_BY_RULE = ["git commit -m msg", "git commit -am 'a b'", "/usr/bin/git commit"]
READ_ONLY = [
    "ls",
    "cat README.md",
    "git status",
    "grep -n x README.md",
    "wc -l README.md",
    "echo hi",
]
OTHER = ["npm install", "curl http://e", "sh", "python3 -c 'x'"]
EDITS = ["touch y", "echo x > out"]  # allowed in accept_edits mode, asked otherwise
CONNECTORS = ["; ", " && ", " || ", " | ", "\n", " & "]


def _wrap(kind: int, text: str) -> str:
    return [
        text,
        f"( {text} )",
        f"{{ {text}; }}",
        f"if true; then {text}; fi",
        f"echo $( {text} )",
        f"for i in 1; do {text}; done",
    ][kind]


@st.composite
def compounds(draw: st.DrawFn, pools: list[list[str]]) -> tuple[str, list[str]]:
    pool = [p for group in pools for p in group]
    parts = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=8))
    text = parts[0]
    for part in parts[1:]:
        text += draw(st.sampled_from(CONNECTORS)) + part
    return _wrap(draw(st.integers(0, 5)), text), parts


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("prop")
    (root / "README.md").write_text("x\n")
    return root


def _ctx(work: Path, mode: PermissionMode) -> PermissionContext:
    return permission_context(work, mode, allow=["Bash(git commit:*)"], deny=["Bash(rm:*)"])


MODES = st.sampled_from(list(PermissionMode))


@settings(max_examples=150, deadline=None)
@given(case=compounds([DENIED, ALLOWED_BY_RULE, READ_ONLY, OTHER, EDITS]), mode=MODES)
def test_a_denied_part_denies_the_whole(
    work: Path, case: tuple[str, list[str]], mode: PermissionMode
) -> None:
    command, parts = case
    decision = check_shell_command(command, _ctx(work, mode), cwd=str(work))
    engine = asyncio.run(
        PermissionEngine(_ctx(work, mode)).decide(FakeBash(), {"command": command})
    )
    if any(p in DENIED for p in parts):
        assert decision.behavior is PermissionBehavior.DENY, command
        assert engine.behavior is PermissionBehavior.DENY, command
    else:
        assert decision.behavior is not PermissionBehavior.DENY or mode in (
            PermissionMode.DONT_ASK,
            PermissionMode.EXPLORE,
        )


@settings(max_examples=150, deadline=None)
@given(
    case=compounds([ALLOWED_BY_RULE, READ_ONLY, OTHER, EDITS]),
    mode=st.sampled_from(
        [PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.DONT_ASK]
    ),
)
def test_a_part_nobody_allowed_keeps_the_whole_from_running(
    work: Path, case: tuple[str, list[str]], mode: PermissionMode
) -> None:
    command, parts = case
    decision = check_shell_command(command, _ctx(work, mode), cwd=str(work))
    engine = asyncio.run(
        PermissionEngine(_ctx(work, mode)).decide(FakeBash(), {"command": command})
    )
    unallowed = OTHER if mode is PermissionMode.ACCEPT_EDITS else OTHER + EDITS
    if any(p in unallowed for p in parts) or command.startswith("echo $("):
        assert decision.behavior is not PermissionBehavior.ALLOW, command
        assert engine.behavior is not PermissionBehavior.ALLOW, command
    elif not command.startswith("echo $("):
        # Where the grammar joins two lines after a pipeline, tether splits them as bash
        # runs them and still asks (test_permission_joined_lines): the one allowed miss.
        joined = "\n" in command and "joined two lines" in decision.reason
        assert decision.behavior is PermissionBehavior.ALLOW or (
            joined and decision.behavior is PermissionBehavior.ASK
        ), (command, decision.reason)


@settings(max_examples=150, deadline=None)
@given(case=compounds([ALLOWED_BY_RULE, READ_ONLY, OTHER, EDITS, DENIED]))
def test_allow_rule_matches_only_when_every_part_is_covered(
    work: Path, case: tuple[str, list[str]]
) -> None:
    command, parts = case
    rule = PermissionRule.parse("Bash(git commit:*)")
    if match_shell_rule(rule, command, cwd=str(work)):
        assert all(p in ALLOWED_BY_RULE for p in parts), command
    deny = PermissionRule.parse("Bash(rm:*)", behavior=PermissionBehavior.DENY)
    assert match_shell_rule(deny, command, cwd=str(work)) is any(p in DENIED for p in parts)
