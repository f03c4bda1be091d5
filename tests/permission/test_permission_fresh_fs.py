"""Decisions see the file system as it is now: what changes between two decisions counts.

Parses, rule patterns and rule verdicts on path strings are memoised; where a path really
leads is not. Each test decides once (so every cache is warm), changes the disk, and
decides again.
"""

from __future__ import annotations

import asyncio
import importlib
from pathlib import Path

import pytest
from permission_fakes import FakeBash
from permission_workspace import Workspace, permission_context

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    check_path_access,
    check_shell_command,
)

ALLOW, ASK = PermissionBehavior.ALLOW, PermissionBehavior.ASK


def _ctx(ws: Workspace, mode: PermissionMode = PermissionMode.DEFAULT) -> PermissionContext:
    return permission_context(
        ws, mode, allow=["Bash(git add:*)", "Edit(src/**)"], deny=["Read(secret/**)"]
    )


def _repoint(link: Path, target: Path) -> None:
    link.unlink()
    link.symlink_to(target)


def _shell(command: str, ctx: PermissionContext, cwd: Path) -> PermissionBehavior:
    return check_shell_command(command, ctx, cwd=str(cwd)).behavior


@pytest.mark.parametrize(
    "command", ["cat notes2.txt", "ls -la notes2.txt", "cat README.md notes2.txt"]
)
def test_a_file_symlink_repointed_out_of_the_work_dir(ws: Workspace, command: str) -> None:
    link, ctx = ws.root / "notes2.txt", _ctx(ws)
    link.symlink_to(ws.root / "README.md")
    assert _shell(command, ctx, ws.root) is ALLOW
    assert _shell(command, ctx, ws.root) is ALLOW  # every cache is warm now
    _repoint(link, ws.outside / "data.txt")
    assert _shell(command, ctx, ws.root) is ASK
    _repoint(link, ws.root / "README.md")
    assert _shell(command, ctx, ws.root) is ALLOW


def test_a_directory_symlink_repointed_out_of_the_work_dir(ws: Workspace) -> None:
    (ws.outside / "app.py").write_text("x\n")
    link, ctx = ws.root / "d", _ctx(ws)
    link.symlink_to(ws.root / "src")
    commands = ("cat d/app.py", "ls -la d", "cat README.md d/app.py", "cat d/x d/app.py")
    for _ in range(2):
        for command in commands:
            assert _shell(command, ctx, ws.root) is ALLOW, command
    _repoint(link, ws.outside)
    for command in commands:
        assert _shell(command, ctx, ws.root) is ASK, command
    _repoint(link, ws.home / ".ssh")
    decision = check_shell_command("ls -la d", ctx, cwd=str(ws.root))
    assert decision.behavior is ASK and decision.safety_check


def test_a_missing_file_that_becomes_a_symlink(ws: Workspace) -> None:
    ctx = _ctx(ws)
    assert _shell("cat new.txt", ctx, ws.root) is ALLOW
    (ws.root / "new.txt").symlink_to(ws.home / ".ssh" / "id_rsa")
    decision = check_shell_command("cat new.txt", ctx, cwd=str(ws.root))
    assert decision.behavior is ASK and decision.safety_check


def test_the_shell_cwd_repointed_out_of_the_work_dir(ws: Workspace) -> None:
    (ws.outside / "app.py").write_text("x\n")
    cwd, ctx = ws.root / "here", _ctx(ws)
    cwd.symlink_to(ws.root / "src")
    for command in ("cat app.py", "ls", "ls -la app.py"):
        assert _shell(command, ctx, cwd) is ALLOW, command
    _repoint(cwd, ws.outside)
    for command in ("cat app.py", "ls", "ls -la app.py"):
        assert _shell(command, ctx, cwd) is ASK, command


def test_files_in_a_cwd_moved_out_and_replaced_by_a_symlink(ws: Workspace) -> None:
    # The moved directory keeps its device and inode, so a cache of the cwd's real path
    # checked by `stat` still hits; files inside it must be resolved afresh anyway.
    cwd, ctx = ws.root / "proj", _ctx(ws)
    cwd.mkdir()
    (cwd / "notes").write_text("x\n")
    for command in ("ls", "cat notes", "ls -la notes"):
        assert _shell(command, ctx, cwd) is ALLOW, command
    cwd.rename(ws.outside / "proj")
    cwd.symlink_to(ws.outside / "proj")
    for command in ("cat notes", "ls -la notes", "ls && cat notes", "pwd; ls; cat notes"):
        assert _shell(command, ctx, cwd) is ASK, command


def test_a_rule_allowed_command_sees_a_repointed_argument(ws: Workspace) -> None:
    link, ctx = ws.root / "notes2.txt", _ctx(ws)
    link.symlink_to(ws.root / "README.md")
    assert _shell("git add notes2.txt", ctx, ws.root) is ALLOW
    _repoint(link, ws.home / ".ssh" / "id_rsa")
    assert _shell("git add notes2.txt", ctx, ws.root) is ASK
    _repoint(link, ws.root / "secret" / "key.txt")
    assert check_shell_command("git add notes2.txt", ctx, cwd=str(ws.root)).behavior is (
        PermissionBehavior.DENY
    )


def test_a_redirect_target_repointed_out_of_the_work_dir(ws: Workspace) -> None:
    link, ctx = ws.root / "out.txt", _ctx(ws, PermissionMode.ACCEPT_EDITS)
    link.symlink_to(ws.root / "src" / "out.txt")
    assert _shell("echo x > out.txt", ctx, ws.root) is ALLOW
    _repoint(link, ws.outside / "out.txt")
    assert _shell("echo x > out.txt", ctx, ws.root) is ASK


def test_file_tools_and_the_engine_see_a_repointed_symlink(ws: Workspace) -> None:
    link, ctx = ws.root / "notes2.txt", _ctx(ws)
    link.symlink_to(ws.root / "src" / "app.py")

    def decide() -> tuple[PermissionBehavior, PermissionBehavior, PermissionBehavior]:
        engine = PermissionEngine(ctx)
        shell = asyncio.run(engine.decide(FakeBash(), {"command": "cat notes2.txt"}))
        read = check_path_access("Read", "notes2.txt", "read", ctx, cwd=str(ws.root))
        edit = check_path_access("Edit", "notes2.txt", "write", ctx, cwd=str(ws.root))
        return shell.behavior, read.behavior, edit.behavior

    assert decide() == (ALLOW, ALLOW, ALLOW)  # `Edit(src/**)` matches the real path
    _repoint(link, ws.outside / "data.txt")
    assert decide() == (ASK, ASK, ASK)


def test_every_memo_is_bounded() -> None:
    names = ("_path_rules", "_paths", "_resolve", "_sensitive", "_shell_plan", "_shell_rules")
    modules = [f"tether.permission.{name}" for name in names]
    modules += [f"tether.shell.{name}" for name in ("_parse", "_paths", "_commands")]
    found = 0
    for name in modules:
        module = importlib.import_module(name)
        for value in vars(module).values():
            info = getattr(value, "cache_info", None)
            if callable(info):
                found += 1
                assert info().maxsize is not None, f"{name}.{value!r} is unbounded"
    assert found >= 10
