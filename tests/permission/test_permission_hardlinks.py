"""Issue 13, item 4: a file with more than one hard link may be outside the work dir.

A hard link in the work dir to `~/.aws/credentials` was read without asking; in
ACCEPT_EDITS an `Edit` of a hard link to `~/.bashrc` rewrote `~/.bashrc`.
"""

from __future__ import annotations

import os

import pytest
from permission_workspace import Workspace, permission_context

from tether.permission import (
    PermissionBehavior,
    PermissionMode,
    check_path_access,
    check_shell_command,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


@pytest.fixture
def ws(ws: Workspace) -> Workspace:
    os.link(ws.home / ".aws" / "credentials", ws.root / "creds.txt")
    os.link(ws.home / ".bashrc", ws.root / "src" / "rc.txt")
    return ws


@pytest.mark.parametrize("path", ["creds.txt", "src/rc.txt"])
def test_reading_a_hard_link_asks(ws: Workspace, path: str) -> None:
    for mode in (PermissionMode.DEFAULT, PermissionMode.ACCEPT_EDITS, PermissionMode.EXPLORE):
        assert (
            check_path_access(
                "Read", path, "read", permission_context(ws, mode), cwd=str(ws.root)
            ).behavior
            is ASK
        )
    dont = permission_context(ws, PermissionMode.DONT_ASK)
    assert check_path_access("Read", path, "read", dont, cwd=str(ws.root)).behavior is DENY


@pytest.mark.parametrize(
    "command",
    ["cat creds.txt", "head -n1 src/rc.txt", "cd src && cat rc.txt", "grep -r x .", "wc -l *.txt"],
)
def test_shell_reads_of_a_hard_link_ask(ws: Workspace, command: str) -> None:
    assert check_shell_command(command, permission_context(ws), cwd=str(ws.root)).behavior is ASK, (
        command
    )


def test_an_allow_rule_naming_the_link_allows_reading_it(ws: Workspace) -> None:
    ctx = permission_context(ws, allow=["Read(creds.txt)"])
    assert check_path_access("Read", "creds.txt", "read", ctx, cwd=str(ws.root)).behavior is ALLOW
    broad = permission_context(ws, allow=["Read(src/**)"])
    assert (
        check_path_access("Read", "src/rc.txt", "read", broad, cwd=str(ws.root)).behavior is ALLOW
    )


@pytest.mark.parametrize("tool", ["Edit", "Write"])
def test_writing_a_hard_link_asks_even_in_accept_edits(ws: Workspace, tool: str) -> None:
    accept = permission_context(ws, PermissionMode.ACCEPT_EDITS)
    assert check_path_access(tool, "src/rc.txt", "write", accept, cwd=str(ws.root)).behavior is ASK
    # A plain file beside it is still an edit inside the work dir.
    assert (
        check_path_access(tool, "src/app.py", "write", accept, cwd=str(ws.root)).behavior is ALLOW
    )
    explore = permission_context(ws, PermissionMode.EXPLORE)
    assert (
        check_path_access(tool, "src/rc.txt", "write", explore, cwd=str(ws.root)).behavior
        is not ALLOW
    )


def test_shell_writes_to_a_hard_link_ask_in_accept_edits(ws: Workspace) -> None:
    accept = permission_context(ws, PermissionMode.ACCEPT_EDITS)
    assert check_shell_command("echo x >> src/rc.txt", accept, cwd=str(ws.root)).behavior is ASK
    assert check_shell_command("touch src/rc.txt", accept, cwd=str(ws.root)).behavior is ASK


def test_a_removed_second_link_makes_the_file_plain_again(ws: Workspace) -> None:
    (ws.home / ".aws" / "credentials").unlink()
    assert (
        check_path_access(
            "Read", "creds.txt", "read", permission_context(ws), cwd=str(ws.root)
        ).behavior
        is ALLOW
    )
