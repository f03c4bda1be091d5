"""Issue 13, item 3: recursive readers are allowed only when their walk stays inside.

With `vendor` → `~/.ssh` in the work dir, `grep -R PRIVATE .` was ALLOW and printed the
key: only `.` was checked. A walk is now checked at decision time: no symlink under the
tree may resolve outside the work dirs, and a reader of contents may not reach a
sensitive path.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionMode,
    check_shell_command,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = Path(os.path.realpath(tmp_path)) / "home"
    (path / ".ssh").mkdir(parents=True)
    (path / ".ssh" / "id_rsa").write_text("PRIVATE KEY\n")
    (path / "notes").mkdir()
    (path / "notes" / "todo.txt").write_text("PRIVATE todo\n")
    monkeypatch.setenv("HOME", str(path))
    return path


@pytest.fixture
def work(home: Path) -> Path:
    path = home.parent / "work"
    (path / "src" / "deep").mkdir(parents=True)
    (path / "src" / "app.py").write_text("print(1)\n")
    (path / "src" / "deep" / "x.py").write_text("x = 1\n")
    return path


def _decide(work: Path, command: str, cwd: Path | None = None, **kw) -> PermissionBehavior:
    context = PermissionContext(working_directories=[str(work)], **kw)
    return check_shell_command(command, context, cwd=str(cwd or work)).behavior


WALKERS = [
    "grep -R PRIVATE .",
    "grep -r PRIVATE",
    "grep -rn PRIVATE src",
    "grep --recursive PRIVATE .",
    "grep --dereference-recursive PRIVATE .",
    "grep -d recurse PRIVATE .",
    "egrep -R PRIVATE .",
    "rg PRIVATE",
    "rg -L PRIVATE src",
    "find -L . -name x.py",
    "find . -type f",
    "ls -R",
    "ls -laR src",
    "ls --recursive .",
    "du -a",
    "du -L src",
    "tree",
    "tree -l src",
    "diff -r src .",
    "cat src/*/*/id_rsa",
]


@pytest.mark.parametrize("command", WALKERS)
def test_a_symlink_out_of_the_tree_makes_a_walk_ask(work: Path, home: Path, command: str) -> None:
    assert _decide(work, command) is ALLOW, command  # nothing leads out yet
    (work / "src" / "deep" / "vendor").symlink_to(home / ".ssh")
    assert _decide(work, command) is ASK, command


def test_a_symlink_to_a_plain_outside_dir_asks_too(work: Path, home: Path) -> None:
    (work / "src" / "docs").symlink_to(home / "notes")
    for command in ("grep -R PRIVATE .", "rg -L PRIVATE", "find -L src", "du -L ."):
        assert _decide(work, command) is ASK, command


def test_a_symlink_inside_the_work_dirs_is_followed(work: Path, home: Path) -> None:
    other = work.parent / "other"
    other.mkdir()
    (work / "src" / "shared").symlink_to(other)
    # `other` is a work dir too: the link stays inside, and the walk goes on in it.
    context = PermissionContext(working_directories=[str(work), str(other)])
    assert check_shell_command("grep -R x .", context, cwd=str(work)).behavior is ALLOW
    (other / "keys").symlink_to(home / ".ssh")
    assert check_shell_command("grep -R x .", context, cwd=str(work)).behavior is ASK


def test_a_reader_of_contents_does_not_reach_sensitive_files(work: Path) -> None:
    (work / "src" / ".env.production").write_text("TOKEN=s3cret\n")
    for command in ("grep -r TOKEN .", "grep -R TOKEN src", "rg --hidden TOKEN", "rg -uu TOKEN"):
        assert _decide(work, command) is ASK, command
    # ripgrep skips hidden files unless told otherwise; names alone are not contents.
    for command in ("rg TOKEN", "find . -name '*.py'", "ls -R", "tree src", "du -a"):
        assert _decide(work, command) is ALLOW, command
    # An allow rule naming the file makes it readable.
    assert _decide(work, "grep -r TOKEN .", allow_rules=["Read(src/.env.production)"]) is ALLOW


def test_a_loop_of_links_inside_is_walked_once(work: Path) -> None:
    (work / "src" / "deep" / "loop").symlink_to(work / "src")
    assert _decide(work, "grep -R x .") is ALLOW


def test_a_tree_too_large_to_check_asks(work: Path) -> None:
    big = work / "big"
    big.mkdir()
    for i in range(205):
        (big / f"f{i}").write_text("")
    from tether.shell import _walk

    assert _walk.walk_problem([str(big)], (str(work),), limit=200) is not None
    assert _walk.walk_problem([str(big)], (str(work),), limit=300) is None


def test_explore_mode_allows_a_clean_walk_and_asks_otherwise(work: Path, home: Path) -> None:
    assert _decide(work, "grep -R x .", mode=PermissionMode.EXPLORE) is ALLOW
    (work / "vendor").symlink_to(home / ".ssh")
    assert _decide(work, "grep -R x .", mode=PermissionMode.EXPLORE) is ASK


@pytest.mark.parametrize(
    ("command", "walks_dot"),
    [
        ("grep -r x", True),
        ("grep -r -m 5 src", True),  # `5` is the value of -m, `src` the pattern
        ("grep -r -e x src", False),
        ("grep -rn x src", False),
        ("grep -r --max-count 5 src", True),
        ("grep -r --max 5 src", True),  # an abbreviation takes a value too
        ("grep -r -A -- src", True),
        ("rg x", True),
        ("rg -e x src", False),
        ("rg -t py x src", False),
        ("rg -g -- x", True),
        ("find -name x", True),
        ("find -L -- src -name x", False),
        ("find -D tree src", False),
        ("du -d 1", True),
        ("du -d 1 src", False),
        ("ls -R -I src", True),
        ("tree -L 2 src", False),
    ],
)
def test_which_walks_read_dot_without_naming_it(
    work: Path, home: Path, command: str, walks_dot: bool
) -> None:
    # A link out beside `src`: only a walk of `.` finds it.
    (work / "vendor").symlink_to(home / ".ssh")
    assert (_decide(work, command) is ASK) is walks_dot, command


def test_a_link_to_a_hard_linked_file_elsewhere_inside_asks(work: Path, home: Path) -> None:
    other = work / "other"
    other.mkdir()
    os.link(home / ".ssh" / "id_rsa", other / "hl.txt")
    (work / "src" / "deep" / "x.txt").symlink_to(other / "hl.txt")
    assert _decide(work, "grep -R KEY src") is ASK


def test_grep_exclude_dir_skips_a_directory_by_its_exact_name(work: Path) -> None:
    (work / ".git").mkdir()
    (work / ".git" / "config").write_text("[core]\n")
    assert _decide(work, "grep -r x .") is ASK  # .git/config is sensitive
    for command in ("grep -r --exclude-dir=.git x .", "grep -r --exclude-dir .git x ."):
        assert _decide(work, command) is ALLOW, command
    # A glob is not modelled (it might skip less than the walk would): still asks.
    assert _decide(work, "grep -r --exclude-dir='.g*' x .") is ASK
    # Only directories are skipped: a file of that name is read.
    (work / "src" / "notes").mkdir()
    (work / "src" / "notes" / ".env").write_text("T=1\n")
    assert _decide(work, "grep -r --exclude-dir=.git --exclude-dir=.env x .") is ASK
