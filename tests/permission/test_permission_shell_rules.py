"""`match_shell_rule` (any-part for deny/ask, every-part for allow) and `suggest_shell_rules`."""

from __future__ import annotations

import pytest

from tether.permission import (
    PermissionBehavior,
    PermissionRule,
    match_shell_rule,
    suggest_shell_rules,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


def _match(rule: str, command: str, behavior: PermissionBehavior) -> bool:
    return match_shell_rule(PermissionRule.parse(rule, behavior=behavior), command, cwd="/")


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(git commit:*)", "git commit -m x", True),
        ("Bash(git commit:*)", "git commit", True),
        ("Bash(git commit:*)", "git  commit   -am 'x y'", True),
        ("Bash(git commit:*)", "git commit-tree x", False),
        ("Bash(git commit:*)", "git commit -m x && git commit -m y", True),
        ("Bash(git commit:*)", "git commit -m x; curl e | sh", False),
        ("Bash(git commit:*)", "git commit -m $(id)", False),
        ("Bash(git commit:*)", "git commit -m $MSG", False),
        ("Bash(git commit:*)", "git commit -m x > log", False),
        ("Bash(git commit:*)", "git commit -m x 2>/dev/null", True),
        ("Bash(git commit:*)", "sudo git commit -m x", False),
        ("Bash(git commit:*)", "/usr/bin/git commit -m x", True),
        ("Bash(git commit:*)", "./git commit -m x", False),
        ("Bash(git commit:*)", "GIT commit -m x", False),
        ("Bash(git commit:*)", "git add ~/.ssh/id_rsa; git commit", False),
        ("Bash(npm test)", "npm test", True),
        ("Bash(npm test)", "npm test --watch", False),
        ("Bash(python3:*)", "python3 -c 'print(1)'", False),
        ("Bash(python3:*)", "python3 tool.py", True),
        ("Bash(bash:*)", "bash -c 'ls'", False),
        ("Bash(npm run build && npm test)", "npm run build && npm test", True),
        ("Bash(npm run build && npm test)", "npm run build && npm test; rm x", False),
        ("Bash", "anything $(at all)", True),
    ],
)
def test_allow_rules_match_every_part_strictly(rule: str, command: str, expected: bool) -> None:
    assert _match(rule, command, ALLOW) is expected


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("Bash(rm:*)", "ls; rm x", True),
        ("Bash(rm:*)", "ls && echo rm", False),
        ("Bash(rm:*)", "grep rm file", False),
        ("Bash(rm -rf:*)", "rm -rf /", True),
        ("Bash(rm -rf:*)", "rm -r -f /", False),  # textual: deny the command, not one spelling
        ("Bash(rm -rf:*)", "rm $FLAGS /", True),  # a run-time word may be `-rf`
        ("Bash(rm:*)", "$X -rf /", True),
        ("Bash(curl:*)", "CURL http://x", True),
        ("Bash(curl:*)", "nohup curl x &", True),
        ("Bash(curl:*)", "timeout 5 curl x", True),
        ("Bash(curl:*)", "echo x | xargs -n1 curl", True),
        ("Bash(git push:*)", "git push origin main", True),
        ("Bash(git push:*)", "git pull", False),
        ("Bash(git push --force)", "git push --force", True),
        ("Bash(git push --force)", "git push --force origin", False),
        ("Bash(curl x | sh)", "curl  x |  sh", True),
    ],
)
def test_deny_rules_match_any_part_loosely(rule: str, command: str, expected: bool) -> None:
    assert _match(rule, command, DENY) is expected
    assert _match(rule, command, ASK) is expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git commit -m 'fix bug'", ["Bash(git commit:*)"]),
        (
            "git commit -m x && npm run build && npm test",
            ["Bash(git commit:*)", "Bash(npm run build:*)", "Bash(npm test:*)"],
        ),
        ("python -m pytest -q tests", ["Bash(python -m pytest:*)"]),
        ("python3 scripts/gen.py --out x", ["Bash(python3 scripts/gen.py:*)"]),
        ("pytest -q", ["Bash(pytest:*)"]),
        ("make", ["Bash(make)"]),
        ("mkdir -p build", ["Bash(mkdir:*)"]),
        ("rm build.log", ["Bash(rm build.log)"]),
        ("rm 'a b'", []),
        ("curl https://x", ["Bash(curl https://x)"]),
        ("ls -la; cat README.md", []),
        ("bash -c 'make'", []),
        ("python -c 'print(1)'", []),
        ("sudo apt install x", []),
        ("echo $(npm test)", []),
        ("git status; git push", ["Bash(git push:*)"]),
        ("git push; git push origin", ["Bash(git push:*)"]),
    ],
)
def test_suggestions_are_narrow(command: str, expected: list[str]) -> None:
    assert [str(r) for r in suggest_shell_rules(command, cwd="/")] == expected


@pytest.mark.parametrize(
    "command",
    [
        "python x.py",
        "python3 -m http.server",
        "bash run.sh",
        "sh",
        "node app.js",
        "sudo make",
        "env A=1 make",
        "perl x.pl",
        "awk '{print}' f",
    ],
)
def test_interpreters_and_shells_never_get_a_bare_prefix(command: str) -> None:
    for rule in suggest_shell_rules(command, cwd="/"):
        assert rule.rule_content not in {
            "python:*",
            "python3:*",
            "bash:*",
            "sh:*",
            "node:*",
            "sudo:*",
            "env:*",
            "perl:*",
            "awk:*",
        }
        assert rule.rule_content is not None and " " in rule.rule_content.removesuffix(":*")


def test_a_suggested_rule_allows_the_command_it_came_from() -> None:
    for command in [
        "git commit -m x",
        "npm run build -- --prod",
        "python -m pytest -q",
        "rm build.log",
        "pytest",
    ]:
        for rule in suggest_shell_rules(command, cwd="/"):
            assert match_shell_rule(rule, command, cwd="/"), (rule, command)
