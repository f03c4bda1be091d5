"""More adversarial cases of issue 13's classes, generated from tether's own tables.

Every forbidden option of every read-only program stays forbidden behind `--` and behind a
value-taking option that swallows `--`; links out of the tree are found however they are
laid out (chains, relative, in hidden dirs, dangling, behind a glob); hard links anywhere.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    check_shell_command,
)
from tether.shell._commands import _READ_ONLY
from tether.shell._options import OPTION_MODELS

ALLOW, ASK = PermissionBehavior.ALLOW, PermissionBehavior.ASK


def _forbidden_words() -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    for name, model in sorted(OPTION_MODELS.items()):
        spec = _READ_ONLY.get(name)
        if spec is None:
            continue
        prefix = f"{name} status" if spec.subcommands else name
        found += [(prefix, option) for option in sorted(model.options)]
    return found


FORBIDDEN = _forbidden_words()
SWALLOWERS = ["--", "-T --", "--width --", "x --", "-- --"]


@pytest.fixture
def work(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = Path(os.path.realpath(tmp_path))
    home = base / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("KEY\n")
    (home / "plain").mkdir()
    (home / "plain" / "x.txt").write_text("x\n")
    monkeypatch.setenv("HOME", str(home))
    root = base / "work"
    (root / "src" / "a" / "b").mkdir(parents=True)
    (root / "src" / "a" / "b" / "c.py").write_text("c\n")
    return root


def _decide(work: Path, command: str) -> PermissionBehavior:
    context = PermissionContext(working_directories=[str(work)])
    return check_shell_command(command, context, cwd=str(work)).behavior


def test_there_are_many_generated_cases() -> None:
    assert len(FORBIDDEN) * len(SWALLOWERS) >= 150


@pytest.mark.parametrize("swallow", SWALLOWERS)
@pytest.mark.parametrize(("prefix", "option"), FORBIDDEN)
def test_a_forbidden_option_after_dashdash_is_never_allowed(
    work: Path, prefix: str, option: str, swallow: str
) -> None:
    command = f"{prefix} {swallow} {option} out"
    assert _decide(work, command) is ASK, command


def _home(work: Path) -> Path:
    return work.parent / "home"


LAYOUTS = {
    "chain": lambda w: (
        (w / "src" / "hop").symlink_to(w / "src" / "hop2"),
        (w / "src" / "hop2").symlink_to(_home(w) / "plain"),
    ),
    "relative": lambda w: (w / "src" / "a" / "up").symlink_to("../../../home/plain"),
    "hidden-dir": lambda w: (
        (w / "src" / ".cache").mkdir(),
        (w / "src" / ".cache" / "k").symlink_to(_home(w) / ".ssh"),
    ),
    "deep": lambda w: (w / "src" / "a" / "b" / "deep").symlink_to(_home(w)),
    "file-link": lambda w: (w / "src" / "a" / "key.txt").symlink_to(_home(w) / ".ssh" / "id_rsa"),
    "root": lambda w: (w / "src" / "r").symlink_to("/"),
    "proc": lambda w: (w / "src" / "p").symlink_to("/proc/self/root"),
    "hard-link": lambda w: os.link(_home(w) / ".ssh" / "id_rsa", w / "src" / "a" / "copy.txt"),
    "hard-link-plain": lambda w: os.link(_home(w) / "plain" / "x.txt", w / "src" / "x.txt"),
}
CONTENT_READERS = [
    "grep -R KEY src",
    "grep -r KEY .",
    "rg -L KEY src",
    "rg -uu -L KEY",
    "diff -r src src",
]
LISTERS = ["find -L src", "ls -RL src", "du -L src", "tree -l src", "find src -type f"]


@pytest.mark.parametrize("command", CONTENT_READERS)
@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_a_reader_of_contents_asks_for_every_layout(work: Path, layout: str, command: str) -> None:
    assert _decide(work, command) is ALLOW, command
    LAYOUTS[layout](work)
    # ripgrep skips hidden directories unless told otherwise (`-uu`, `--hidden`).
    expected = ALLOW if layout == "hidden-dir" and command == "rg -L KEY src" else ASK
    assert _decide(work, command) is expected, (layout, command)


@pytest.mark.parametrize("command", LISTERS)
@pytest.mark.parametrize("layout", sorted(k for k in LAYOUTS if not k.startswith("hard")))
def test_a_lister_asks_for_every_link_out(work: Path, layout: str, command: str) -> None:
    LAYOUTS[layout](work)
    assert _decide(work, command) is ASK, (layout, command)


def test_a_dangling_link_out_asks_for_a_walk(work: Path) -> None:
    (work / "src" / "later").symlink_to(_home(work) / "not-yet")
    assert _decide(work, "grep -R x src") is ASK


def test_a_link_inside_the_work_dir_is_fine(work: Path) -> None:
    (work / "src" / "alias").symlink_to(work / "src" / "a")
    (work / "src" / "rel").symlink_to("a/b")
    for command in CONTENT_READERS + LISTERS:
        assert _decide(work, command) is ALLOW, command


def test_a_glob_through_a_link_out_asks(work: Path) -> None:
    LAYOUTS["deep"](work)
    for command in (
        "cat src/a/b/*/.ssh/id_rsa",
        "cat src/*/b/deep/plain/x.txt",
        "wc -l src/a/*/*/*",
    ):
        assert _decide(work, command) is ASK, command
