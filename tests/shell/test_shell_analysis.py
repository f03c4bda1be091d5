"""`analyze_command`: words, redirects, cd targets, nested code, problems, caching."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tether.permission import is_read_only_command
from tether.shell import analyze_command


def _words(command: str) -> list[list[str | None]]:
    return [
        [w.value if w.static else None for w in c.all_words]
        for c in analyze_command(command).commands
    ]


def test_importing_the_package_does_not_load_tree_sitter() -> None:
    code = "import sys, tether.permission; assert 'tree_sitter' not in sys.modules, 'eager import'; tether.permission.analyze_command('ls'); assert 'tree_sitter' in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


def test_parses_are_cached() -> None:
    assert analyze_command("git status && ls") is analyze_command("git status && ls")


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("git commit -m 'a b'", [["git", "commit", "-m", "a b"]]),
        ('echo "a\\"b" c\\ d', [["echo", 'a"b', "c d"]]),
        ("r''m -rf x", [["rm", "-rf", "x"]]),
        ("\\rm x", [["rm", "x"]]),
        ("$'\\x72\\155' x", [["rm", "x"]]),
        ("ls \\\n -la", [["ls", "-la"]]),
        ("a | b && c; d & e\nf", [["a"], ["b"], ["c"], ["d"], ["e"], ["f"]]),
        ("(a; { b; }) || if c; then d; fi", [["a"], ["b"], ["c"], ["d"]]),
        ("cat $HOME/x *.py", [["cat", None, None]]),
        ("X=1 ls", [["ls"]]),
    ],
)
def test_words_are_what_bash_passes(command: str, words: list[list[str | None]]) -> None:
    assert _words(command) == words


def test_substitutions_yield_their_inner_commands_and_a_problem() -> None:
    analysis = analyze_command("echo $(rm x) `id` <(cat y)")
    assert [c.name for c in analysis.commands] == ["echo", "rm", "id", "cat"]
    assert [c.nested for c in analysis.commands] == [False, True, True, True]
    assert any("substitution" in p for p in analysis.problems)


def test_bash_c_and_eval_strings_are_analysed() -> None:
    assert [c.name for c in analyze_command("bash -c 'ls; rm x'").commands] == ["bash", "ls", "rm"]
    assert [c.name for c in analyze_command("sudo sh -ec 'curl x | sh'").commands] == [
        "sudo",
        "curl",
        "sh",
    ]
    assert [c.name for c in analyze_command("eval 'rm -rf x'").commands] == ["eval", "rm"]
    deep = "bash -c " + "'bash -c \"" * 1 + "ls" + "\"'"
    assert "ls" in [c.name for c in analyze_command(deep).commands]


def test_redirects() -> None:
    analysis = analyze_command("cat <in >out 2>&1 >>log &>all 2>/dev/null")
    assert [(r.operator, r.target.value, r.access) for r in analysis.redirects] == [
        ("<", "in", "read"),
        (">", "out", "write"),
        (">>", "log", "write"),
        ("&>", "all", "write"),
        (">", "/dev/null", "write"),
    ]
    assert analyze_command("cat <<<x").redirects == ()
    # The grammar has no `<>`: such a command does not parse and can never be allowed.
    assert analyze_command("exec 3<>f").problems[0] == "it does not parse as bash"
    heredoc = analyze_command("cat <<'EOF' > f\n$(id)\nEOF")
    assert [r.target.value for r in heredoc.redirects] == ["f"]
    assert heredoc.problems == ()  # a quoted here-doc body is plain text


def test_cd_targets() -> None:
    assert analyze_command("cd src && cd ../x; pushd /tmp; cd").cd_targets == (
        "src",
        "../x",
        "/tmp",
        "~",
    )
    assert analyze_command("cd $D").cd_targets == (None,)
    assert analyze_command("cd -").cd_targets == (None,)
    assert analyze_command("for i in 1 2; do cd sub; done").cd_targets == (None,)
    assert analyze_command("cd '~'").cd_targets == ("./~",)


@pytest.mark.parametrize(
    "command",
    [
        "ls )",
        "echo 'unterminated",
        "f() { ls; }",
        "export A=1",
        "echo $((1+2))",
        "echo ${a[$i]}",
        "[[ $a -gt 1 ]]",
        "PATH=/x",
    ],
)
def test_problems(command: str) -> None:
    assert analyze_command(command).problems


def test_too_long_is_a_problem_not_a_parse() -> None:
    analysis = analyze_command("ls " * 40_000)
    assert analysis.parse_error and analysis.commands == () and analysis.problems


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("ls -la && cat a | grep x | wc -l", True),
        ("git log --oneline; git diff HEAD", True),
        ("find . -name '*.py'", True),
        ("echo x > /dev/null", True),
        ("echo x > out", False),
        ("git commit -m x", False),
        ("git -C x status", False),
        ("find . -delete", False),
        ("sort -o x y", False),
        ("uniq a b", False),
        ("./ls", False),
        ("/usr/bin/ls", True),
        ("ls $(id)", False),
        ("date -s 2020-01-01", False),
        ("", False),
    ],
)
def test_is_read_only_command(command: str, read_only: bool) -> None:
    assert is_read_only_command(command, cwd="/") is read_only
