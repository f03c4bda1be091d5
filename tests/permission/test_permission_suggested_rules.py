"""Property (issue 31): a suggested rule, once accepted, never allows a hazardous variant.

For every corpus command, each rule tether suggests for it is accepted; then variants of
the rule's command are generated (hazardous words appended or inserted after the rule's
words, a `cd` into an embedded bare repository first). A variant that the analysis
without rules classifies as executing a program, writing outside the work dir, reading a
sensitive path or loading repository config that names a program must not be allowed,
neither by the shell decision nor by the engine's allow-rule match.
"""

from __future__ import annotations

import os
import shlex

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from permission_workspace import Workspace
from test_permission_insertions import CORPUS

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionRule,
    analyze_command,
    check_shell_command,
    is_sensitive_path,
    match_allow_rule,
    suggest_shell_rules,
)
from tether.shell import git_config_problem, possible_dirs

HAZARDS = [
    "--output=/tmp/tether-31-o",
    "-o /tmp/tether-31-o",
    "--outp=~/x",
    "-o~/x",
    "--files0-from=l",
    "--files0=l",
    "'s/x/id/e'",
    "'1e id'",
    "-n 'w /tmp/tether-31-o'",
    "-e 'r ~/.ssh/id_rsa'",
    "--rsh-command=x",
    "--rsh-comm=x",
    "-I prog",
    "--to-command=x",
    "--checkpoint-action=exec=x",
    "-exec id \\;",
    "-fprint /tmp/tether-31-o",
    "--compress-program=sh",
    "~/.ssh/id_rsa",
    ".env",
    "-C emb",
    "--git-dir=emb",
    "-O ~/.ssh/id_rsa",
    "-T /tmp",
    "--pre=./x",
    "-c core.pager=id",
    "-cf host:x.tar",
]


@pytest.fixture(scope="module")
def ws(module_ws: Workspace) -> Workspace:
    emb = module_ws.root / "emb"  # an embedded bare repository, as a clone delivers it
    for d in ("objects", "refs"):
        (emb / d).mkdir(parents=True)
    (emb / "HEAD").write_text("ref: refs/heads/main\n")
    (emb / "config").write_text("[core]\n\tbare = false\n\tworktree = .\n\tfsmonitor = id\n")
    return module_ws


def _inside(path: str, cwd: str, root: str) -> bool:
    full = os.path.realpath(os.path.join(cwd, os.path.expanduser(path)))
    return full == root or full.startswith(root + "/")


def hazardous(command: str, root: str) -> str | None:
    """What the analysis without rules says the command does that no rule grants."""
    analysis = analyze_command(command)
    dirs = possible_dirs(analysis, root)
    if dirs is None:
        return "runs in a directory known only when run"
    for part in analysis.commands:
        if part.problems:
            return f"problem: {part.problems[0]}"
        for cwd in dirs:
            for hazard in part.hazards:
                if hazard.kind in ("exec", "names"):
                    return hazard.reason
                if hazard.kind == "git":
                    where = cwd if hazard.path is None else os.path.join(cwd, hazard.path)
                    if git_config_problem(where) is not None:
                        return "loads repository config that names a program"
                elif hazard.path is None or not _inside(hazard.path, cwd, root):
                    return f"{hazard.reason} outside"
                elif is_sensitive_path(os.path.join(cwd, os.path.expanduser(hazard.path))):
                    return f"{hazard.reason}: sensitive"
            for path in part.args.paths:
                if is_sensitive_path(os.path.join(cwd, os.path.expanduser(path))):
                    return f"reads the sensitive {path}"
    return None


@st.composite
def variants(draw: st.DrawFn) -> tuple[str, str]:
    command = draw(st.sampled_from(CORPUS))
    extra = draw(st.lists(st.sampled_from(HAZARDS), min_size=1, max_size=2))
    where = draw(st.sampled_from(["end", "after-prefix", "cd"]))
    return command, f"{where}\0{' '.join(extra)}"


def _variant(rule: PermissionRule, spec: str) -> str | None:
    where, extra = spec.split("\0")
    content = rule.rule_content or ""
    prefix = content.endswith(":*")
    body = content.removesuffix(":*")
    try:
        words = shlex.split(body)
    except ValueError:
        return None
    if not words:
        return None
    if where == "cd":
        return f"cd emb && {body} {extra}"
    if where == "after-prefix" or prefix:
        return f"{body} {extra}"
    return f"{shlex.join(words[:1])} {extra} {shlex.join(words[1:])}"


def _context(ws: Workspace, rule: PermissionRule | None) -> PermissionContext:
    return PermissionContext(
        working_directories=[str(ws.root)], allow_rules=[rule] if rule is not None else []
    )


@settings(
    max_examples=600, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(variants())
def test_a_suggested_rule_never_allows_a_hazardous_variant(
    ws: Workspace, case: tuple[str, str]
) -> None:
    command, spec = case
    root = str(ws.root)
    for rule in suggest_shell_rules(command, cwd=root):
        variant = _variant(rule, spec)
        if variant is None or variant == command:
            continue
        why = hazardous(variant, root)
        if why is None:
            continue
        context = _context(ws, rule)
        decision = check_shell_command(variant, context, cwd=root)
        assert decision.behavior is not PermissionBehavior.ALLOW, (command, rule, variant, why)
        assert not match_allow_rule(rule, variant, context, cwd=root), (rule, variant, why)


def test_the_corpus_has_suggestions_to_test() -> None:
    root = os.getcwd()
    suggested = [c for c in CORPUS if suggest_shell_rules(c, cwd=root)]
    assert len(suggested) >= 30


@pytest.mark.parametrize(
    ("command", "variant"),
    [
        ("sed -n 1,5p README.md", "sed 's/x/id/e' README.md"),
        ("sort -o out README.md", "sort -o /tmp/tether-31-o README.md"),
        ("git diff", "cd emb && git diff"),
        ("tar -cf x.tar src", "tar --rsh-command=x -cf host:x.tar src"),
        ("git push origin main", "git push origin main --receive-pack=x"),
    ],
)
def test_named_variants_are_hazardous_and_held(ws: Workspace, command: str, variant: str) -> None:
    root = str(ws.root)
    assert hazardous(variant, root) is not None
    for rule in [*suggest_shell_rules(command, cwd=root), PermissionRule.parse("Bash(git:*)")]:
        context = _context(ws, rule)
        assert check_shell_command(variant, context, cwd=root).behavior is not (
            PermissionBehavior.ALLOW
        )
        assert not match_allow_rule(rule, variant, context, cwd=root)


def test_every_suggested_rule_against_every_hazard(ws: Workspace) -> None:
    """The same property, exhaustively: every corpus suggestion x hazard x placement."""
    root = str(ws.root)
    checked = 0
    for command in CORPUS:
        for rule in suggest_shell_rules(command, cwd=root):
            context = _context(ws, rule)
            for extra in HAZARDS:
                for where in ("end", "after-prefix", "cd"):
                    variant = _variant(rule, f"{where}\0{extra}")
                    if variant is None or variant == command or hazardous(variant, root) is None:
                        continue
                    checked += 1
                    decision = check_shell_command(variant, context, cwd=root)
                    assert decision.behavior is not PermissionBehavior.ALLOW, (rule, variant)
                    assert not match_allow_rule(rule, variant, context, cwd=root), (rule, variant)
    assert checked >= 1000
