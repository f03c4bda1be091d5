r"""Issue 13, item 2: bytes tree-sitter takes for blanks and bash does not (`\r`, `\v`, `\f`).

The analysis read `ls<CR>rm -rf src` as `ls rm -rf src`; bash runs a command named
`ls<CR>rm`. Every command with such a byte now asks.
"""

from __future__ import annotations

import pytest
from permission_workspace import Workspace

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionMode,
    check_shell_command,
    is_read_only_command,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


@pytest.fixture
def ws(ws: Workspace) -> Workspace:
    (ws.root / "d\rx").symlink_to(ws.home / ".aws")
    return ws


def _decide(ws: Workspace, command: str, mode: PermissionMode = PermissionMode.DEFAULT):
    context = PermissionContext(mode=mode, working_directories=[str(ws.root)])
    return check_shell_command(command, context, cwd=str(ws.root)).behavior


COMMANDS = [
    "ls\rrm -rf src",
    "cat d\rx/credentials",
    "cd d\rx && cat credentials",
    "date \r-- --set=2020-01-01",
    "ls\vrm -rf src",
    "cat d\vx/credentials",
    "ls\frm -rf src",
    "cat README.md \f/etc/passwd",
    "echo hi\r",
    "cat README.md\r\nls",
    "ls \\\r\nsrc",
    "git status\r",
    "grep -r x \r.",
    "cat 'README.md'\rx",
]


@pytest.mark.parametrize("command", COMMANDS)
def test_cr_vt_ff_make_a_command_ask(ws: Workspace, command: str) -> None:
    assert _decide(ws, command) is ASK, repr(command)
    assert not is_read_only_command(command, cwd=str(ws.root))
    assert _decide(ws, command, PermissionMode.DONT_ASK) is DENY


def test_the_same_commands_with_plain_blanks_are_allowed(ws: Workspace) -> None:
    for command in ("ls src", "cat README.md", "git status", "echo hi"):
        assert _decide(ws, command) is ALLOW, command
