"""Issue 13, item 1: the option scan models how each program reads its arguments.

`--` ends options only where the program's parser says so, a value-taking option consumes
the next word (even `--` or a word starting with `-`), and `find`'s expression is scanned
to its end. Every case here was ALLOW before the fix.
"""

from __future__ import annotations

import pytest
from permission_fakes import FakeBash
from permission_workspace import Workspace

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    check_shell_command,
    is_read_only_command,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


def _decide(ws: Workspace, command: str, mode: PermissionMode = PermissionMode.DEFAULT):
    context = PermissionContext(mode=mode, working_directories=[str(ws.root)])
    return check_shell_command(command, context, cwd=str(ws.root)).behavior


ISSUE_CASES = [
    'find -- . -maxdepth 0 -exec python3 -c \'open("/tmp/x","w")\' \\;',
    "find -- . -maxdepth 0 -exec rm README.md \\;",
    "find . -name -- -o -name victim.txt -delete",
    "find -H -- . -maxdepth 0 -fprint out",
    "sort -T -- -o out README.md",
    "sort --random-source -- -o victim README.md",
    "git diff -S -- --output=out a b",
    "git diff --no-index -S -- --output=out a b",
    "tree -P -- -o out .",
    "date -f -- --set=2020-01-01",
]


@pytest.mark.parametrize("command", ISSUE_CASES)
async def test_issue_cases_are_not_auto_allowed(ws: Workspace, command: str) -> None:
    assert _decide(ws, command) is ASK
    assert _decide(ws, command, PermissionMode.EXPLORE) is DENY
    assert not is_read_only_command(command, cwd=str(ws.root))
    engine = PermissionEngine(PermissionContext(working_directories=[str(ws.root)]))
    assert (await engine.decide(FakeBash(), {"command": command})).behavior is ASK


OWN_CASES = [
    # `find`: every forbidden primary anywhere in the expression, after `--`, `(`, `!`.
    "find . -- -delete",
    "find -L -- . -fls out",
    "find . ( -name x -o -fprintf out %p ) ",
    "find . ! -name x -okdir rm {} \\;",
    "find . -name x -fprint0 out",
    "find . -files0-from list",
    "find -P -O3 -D tree -- . -execdir id \\;",
    # Value-taking options of the read-only programs swallowing `--`.
    "sort -k -- -o out README.md",
    "sort -t -- --output=out README.md",
    "sort -S -- --compress-program=sh README.md",
    "sort --buffer-size -- --files0-from=list",
    "sort -T -- -mo out README.md",
    "git log -S -- --output=out",
    "git show -G -- --output=out HEAD",
    "git diff -O -- x",
    "git log --grep -- --ext-diff",
    "git diff -- --ext-diff",
    "tree -I -- -o out",
    "tree -L -- -R",
    "date -d -- -s 2020-01-01",
    "date -r -- --set=x",
    "file -m -- -C",
    "file -- --compile",
    "md5sum -- -c list",
    "sha256sum -- --check list",
    "rg -e -- --pre=sh x",
    "rg -g -- --hostname-bin=sh x",
    "fd -e -- -x rm",
    "fd -E -- --exec rm",
    "printf -- -v PATH x",
    "uniq -f -- in -- out",
    "uniq - out",
    "uniq -- in out",
    "uniq -s 1 -- - out",
    # `cd --` names the directory after it; an unknown option makes it unknown.
    "cd -- -x && cat config",
    "cd -Q x && cat README.md",
]


@pytest.mark.parametrize("command", OWN_CASES)
def test_own_option_cases_are_not_auto_allowed(ws: Workspace, command: str) -> None:
    (ws.root / "-x").symlink_to(ws.home / ".ssh")
    (ws.home / ".ssh" / "config").write_text("Host x\n")
    assert _decide(ws, command) is ASK, command


def test_a_value_that_starts_with_a_dash_is_checked_as_a_path(ws: Workspace) -> None:
    # `grep -f -k x` reads its patterns from the file `-k`: a link to the private key.
    (ws.root / "-k").symlink_to(ws.home / ".ssh" / "id_rsa")
    for command in ("grep -f -k README.md", "date -f -k", "grep -e -- -k", "sort -- -k"):
        assert _decide(ws, command) is ASK, command


@pytest.mark.parametrize(
    "command",
    [
        "sort -k 2 -t , README.md",
        "sort -- README.md",
        "find src/pkg -name '*.py' -type f",
        "find -- src/pkg -maxdepth 1 -name mod.py",
        "git diff -- README.md",
        "git log -S foo -- src",
        "uniq -- README.md",
        "uniq -c README.md",
        "grep -e -- README.md",
        "cd -- src && cat app.py",
        "cd -P src && ls",
    ],
)
def test_plain_uses_stay_allowed(ws: Workspace, command: str) -> None:
    assert _decide(ws, command) is ALLOW, command
