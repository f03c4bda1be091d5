"""`..` after a symlink climbs from the link's target, as the kernel does, not lexically.

`link_out/../outside/data.txt` reads like a path inside the work dir, but `link_out` leads
out of it, so the file opened is outside. The checks must judge the file really opened.
"""

from __future__ import annotations

import pytest
from permission_workspace import Workspace, permission_context

from tether.permission import (
    PermissionBehavior,
    PermissionMode,
    check_path_access,
    check_shell_command,
)
from tether.permission._resolve import resolve_path
from tether.tool.builtin._common import resolve_path as tool_resolve_path

ALLOW, ASK = PermissionBehavior.ALLOW, PermissionBehavior.ASK
CLIMB = "link_out/../outside/data.txt"  # really <base>/outside/data.txt


@pytest.fixture
def ws(ws: Workspace) -> Workspace:
    assert (ws.root / CLIMB).read_text() == "outside\n"  # the kernel's reading
    return ws


@pytest.mark.parametrize(
    "command",
    [
        f"cat {CLIMB}",
        f"head -1 {CLIMB}",
        f"cat README.md {CLIMB}",
        "ls link_out/..",
        f"git status && cat ./{CLIMB}",
    ],
)
def test_shell_reads_through_a_link_and_up_are_not_allowed(ws: Workspace, command: str) -> None:
    assert check_shell_command(command, permission_context(ws), cwd=str(ws.root)).behavior == ASK


def test_shell_writes_through_a_link_and_up_are_not_allowed(ws: Workspace) -> None:
    ctx = permission_context(ws, PermissionMode.ACCEPT_EDITS)
    decision = check_shell_command("echo x > link_out/../outside/x.txt", ctx, cwd=str(ws.root))
    assert decision.behavior != ALLOW


@pytest.mark.parametrize("tool", ["Read", "Write"])
def test_file_tools_through_a_link_and_up_are_not_allowed(ws: Workspace, tool: str) -> None:
    access = "read" if tool == "Read" else "write"
    ctx = permission_context(ws, PermissionMode.ACCEPT_EDITS)
    assert check_path_access(tool, CLIMB, access, ctx, cwd=str(ws.root)).behavior == ASK


def test_plain_directories_and_up_stay_allowed(ws: Workspace) -> None:
    ctx = permission_context(ws)
    assert check_shell_command("cat src/../README.md", ctx, cwd=str(ws.root)).behavior == ALLOW
    assert (
        check_path_access("Read", "src/pkg/../app.py", "read", ctx, cwd=str(ws.root)).behavior
        == ALLOW
    )


@pytest.mark.parametrize(
    "path",
    [CLIMB, "src/link_ssh/../app.py", "src/../README.md", "link_out/..", "./src//pkg/mod.py"],
)
def test_the_check_judges_the_file_the_tool_opens(ws: Workspace, path: str) -> None:
    judged = resolve_path(path, str(ws.root)).real
    assert judged == str(tool_resolve_path(path, str(ws.root)))
