"""The one option table (issue 31): what each program's options and scripts do.

`command_hazards` is what every ruled command is checked for, and the read-only list is
derived from the same table; both are tested here on the spellings GNU tools accept.
"""

from __future__ import annotations

import shlex

import pytest

from tether.shell import analyze_command, command_hazards
from tether.shell._commands import is_read_only_words
from tether.shell._sed import sed_script_hazards


def _kinds(command: str) -> list[tuple[str, str | None]]:
    return [(h.kind, h.path) for h in command_hazards(shlex.split(command)) if h.kind != "git"]


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("sed -n 1,5p a.txt", []),
        ("sed 's/.*/id/e' a", [("exec", None)]),
        ("sed '1e id' a", [("exec", None)]),
        ("sed -n 'w /anywhere' a", [("write", "/anywhere")]),
        ("sed 's/a/b/w /tmp/o' a", [("write", "/tmp/o")]),
        ("sed 'W /x' a", [("write", "/x")]),
        ("sed 'r /etc/x' a", [("read", "/etc/x")]),
        ("sed -e p -e 'w /x' a", [("write", "/x")]),
        ("sed --expr='1e id' a", [("exec", None)]),
        ("sed -f s.sed a", [("exec", None)]),
        ("sed -i s/a/b/ x y", [("write", "x"), ("write", "y")]),
        ("sed '/x/,+3{s/a/b/g;p}' a", []),
        ("sed 's|a|b|gI' a", []),
        ("sed 'y/abc/xyz/' a", []),
        ("sed -n 'w /dev/stdout' a", []),
        ("sed --bogus p a", [("exec", None)]),
        ("sort -o /x a", [("write", "/x")]),
        ("sort --outp=/x a", [("write", "/x")]),
        ("sort --output /x a", [("write", "/x")]),
        ("sort -no out a", [("write", "out")]),
        ("sort -oout a", [("write", "out")]),
        ("sort --files0=l", [("names", None)]),
        ("sort --compress-program=sh a", [("exec", None)]),
        ("sort -k1 -t, a", []),
        ("tar --rsh-comm=x -cf a.tar .", [("exec", None)]),
        ("tar xIf prog a.tar", [("exec", None)]),
        ("tar cfC a.tar /outside", [("write", "/outside")]),
        ("tar -xzf a.tar", []),
        ("tar -P -xf a.tar", [("write", None)]),
        ("tar --absolute-names -xf a.tar", [("write", None)]),
        ("tar --abs -xf a.tar", [("write", None)]),
        ("tar xPCf /outside a.tar", [("write", None), ("write", "/outside")]),
        ("tar -xf host:a.tar", [("exec", None)]),
        ("tar --force-local -xf host:a", []),
        ("tar --checkpoint=1 -xf a.tar", []),
        ("tar --checkpoint-action=exec=x -xf a", [("exec", None)]),
        ("git diff --output=/x", [("write", "/x")]),
        ("git diff --outp=/x", [("write", "/x")]),
        ("git diff -O/etc/x", [("read", "/etc/x")]),
        ("git log --oneline", []),
        ("git ls-files -o", []),
        ("git format-patch -o /tmp/x", [("write", "/tmp/x")]),
        ("git grep -O x", [("exec", None)]),
        ("git config core.pager x", [("exec", None)]),
        ("git -c a=b log", [("exec", None)]),
        ("git --git-dir=x log", [("exec", None)]),
        ("find . -exec id ;", [("exec", None)]),
        ("find . -fprint /x", [("write", "/x")]),
        ("tree -o /x", [("write", "/x")]),
        ("md5sum -c list", [("names", None)]),
        ("cat a", []),
    ],
)
def test_hazards(command: str, expected: list[tuple[str, str | None]]) -> None:
    assert _kinds(command) == expected


def test_git_reads_the_config_of_every_repository_it_is_pointed_at() -> None:
    found = [(h.kind, h.path) for h in command_hazards(["git", "-C", "sub", "diff"])]
    assert found == [("git", None), ("git", "sub")]


@pytest.mark.parametrize(
    "script",
    [
        "1e",
        "$e id",
        "/x/e id",
        "s/a/b/e",
        "s/a/b/gew /x",
        "1{e id\n}",
        "p;e",
        "s/a/b/\nw /x",
        "/re/I,/y/M!e id",
        "y/a/b/;e id",
        "a\\\ntext\ne id",
        "s/a\\/b/c/e",
    ],
)
def test_a_sed_script_that_runs_or_writes_is_seen(script: str) -> None:
    assert sed_script_hazards(script)


@pytest.mark.parametrize("script", ["s/a", "1~", "k", "s/a/b/q", "{p", "y/ab/"])
def test_a_sed_script_tether_cannot_read_counts_as_running(script: str) -> None:
    kinds = [h.kind for h in sed_script_hazards(script)]
    assert kinds == ["exec"] or script == "{p"  # an unclosed block is sed's own error


@pytest.mark.parametrize(
    "command",
    ["sort -o out a", "sort --files0-from=l", "find . -fls x", "git diff --output=x", "tree -R"],
)
def test_a_call_with_a_hazard_is_never_read_only(command: str) -> None:
    assert not is_read_only_words(shlex.split(command))
    assert not analyze_command(command).commands[0].read_only


def test_the_analysis_carries_the_hazards() -> None:
    (part,) = analyze_command("sort -o /x a").commands
    assert [(h.kind, h.path) for h in part.hazards] == [("write", "/x")]
