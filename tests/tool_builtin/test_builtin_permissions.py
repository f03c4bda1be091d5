from typing import Any

import pytest

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionEngine,
    PermissionMode,
    PermissionRule,
)
from tether.tool import Bash, Edit, Glob, Grep, Read, Write
from tether.tool.builtin import BubblewrapSandbox, SandboxBase

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


class _Sandbox(SandboxBase):
    """A sandbox stand-in for permission decisions only (nothing is run)."""

    def __init__(self, auto_allow: bool) -> None:
        self.auto_allow = auto_allow

    def wrap(self, argv, *, cwd, work_dirs):
        raise AssertionError("permission checks never run the command")


@pytest.fixture
def work(tmp_path):
    path = tmp_path / "work"
    (path / "src").mkdir(parents=True)
    return path


def _engine(
    work: Any, mode: PermissionMode = PermissionMode.DEFAULT, **rules: Any
) -> PermissionEngine:
    return PermissionEngine(PermissionContext(mode=mode, working_directories=[str(work)], **rules))


async def test_file_reads_inside_the_work_dir_run_and_outside_ask(work, tmp_path):
    engine = _engine(work)
    for tool, args in (
        (Read(), {"file_path": "src/a.py"}),
        (Grep(), {"pattern": "x"}),
        (Glob(), {"pattern": "**/*.py", "path": "src"}),
    ):
        assert (await engine.decide(tool, args)).behavior is ALLOW, tool.name
    outside = await engine.decide(Read(), {"file_path": str(tmp_path / "other.txt")})
    assert outside.behavior is ASK
    assert outside.suggested_rules and all(r.tool_name == "Read" for r in outside.suggested_rules)
    assert (await engine.decide(Grep(), {"pattern": "x", "path": str(tmp_path)})).behavior is ASK
    assert (await engine.decide(Glob(), {"pattern": f"{tmp_path}/*.txt"})).behavior is ASK


async def test_sensitive_files_ask_even_inside(work):
    decision = await _engine(work).decide(Read(), {"file_path": ".env"})
    assert decision.behavior is ASK


async def test_writes_follow_the_mode(work):
    args = {"file_path": "src/a.py", "content": "x"}
    assert (await _engine(work).decide(Write(), args)).behavior is ASK
    assert (
        await _engine(work, PermissionMode.ACCEPT_EDITS).decide(Write(), args)
    ).behavior is ALLOW
    assert (await _engine(work, PermissionMode.EXPLORE).decide(Write(), args)).behavior is DENY
    edit = {"file_path": "src/a.py", "old_string": "a", "new_string": "b"}
    asked = await _engine(work).decide(Edit(), edit)
    assert asked.behavior is ASK and asked.suggested_rules


async def test_path_rules_match_file_tools(work):
    engine = _engine(work, deny_rules=["Read(src/**)"], allow_rules=["Edit(docs/**)"])
    assert (await engine.decide(Read(), {"file_path": "src/a.py"})).behavior is DENY
    assert (await engine.decide(Read(), {"file_path": "README.md"})).behavior is ALLOW
    docs = {"file_path": "docs/x.md", "old_string": "a", "new_string": "b"}
    assert (await engine.decide(Edit(), docs)).behavior is ALLOW
    rule = PermissionRule.parse("Read(src/**)", behavior=DENY)
    assert Read().match_rule(rule, {"file_path": "src/a.py"}, engine.context)
    assert not Read().match_rule(rule, {"file_path": "lib/a.py"}, engine.context)
    assert not Read().match_rule(rule, {"wrong": 1}, engine.context)


async def test_invalid_arguments_are_left_to_validation(work):
    decision = await _engine(work).decide(Write(), {"file_path": 3})
    assert decision.behavior is ALLOW and "invalid" in decision.reason


async def test_read_only_commands_run_and_are_concurrency_safe(work):
    bash = Bash()
    assert bash.is_read_only_call({"command": "ls -la && git status"})
    assert bash.is_concurrency_safe_call({"command": "ls -la"})
    assert not bash.is_concurrency_safe_call({"command": "rm -rf build"})
    assert not bash.is_read_only_call({"command": "echo hi > out.txt"})
    assert not bash.is_read_only_call({})
    assert (await _engine(work).decide(bash, {"command": "ls src"})).behavior is ALLOW


async def test_commands_that_change_things_ask_with_prefix_suggestions(work):
    engine = _engine(work)
    decision = await engine.decide(Bash(), {"command": "npm run build"})
    assert decision.behavior is ASK
    assert [str(r) for r in decision.suggested_rules] == ["Bash(npm run build:*)"]
    accepted = _engine(work, allow_rules=decision.suggested_rules)
    allowed = await accepted.decide(Bash(), {"command": "npm run build --prod"})
    assert allowed.behavior is ALLOW


async def test_bash_rules_match_command_prefixes(work):
    bash, context = Bash(), PermissionContext(working_directories=[str(work)])
    rule = PermissionRule.parse("Bash(git diff:*)")
    assert bash.match_rule(rule, {"command": "git diff HEAD"}, context)
    assert not bash.match_rule(rule, {"command": "git push"}, context)
    deny = _engine(work, deny_rules=["Bash(rm:*)"])
    assert (await deny.decide(bash, {"command": "ls && rm -rf src"})).behavior is DENY


async def test_the_saved_working_directory_is_used(work, tmp_path):
    decision = await _engine(work).decide(
        Bash(), {"command": "cat notes.txt"}, {"cwd": str(tmp_path)}
    )
    assert decision.behavior is ASK  # notes.txt is outside the work dir from there
    inside = await _engine(work).decide(Bash(), {"command": "cat notes.txt"}, {"cwd": str(work)})
    assert inside.behavior is ALLOW


async def test_auto_allow_sandbox_runs_what_would_ask(work):
    sandboxed = Bash(sandbox=_Sandbox(auto_allow=True))
    command = {"command": "npm run build"}
    assert (await _engine(work).decide(sandboxed, command)).behavior is ALLOW
    unattended = _engine(work, PermissionMode.DONT_ASK)
    assert (await unattended.decide(sandboxed, command)).behavior is ALLOW
    assert (await unattended.decide(Bash(), command)).behavior is DENY
    # Deny and ask rules and sensitive paths still hold.
    assert (
        await _engine(work, deny_rules=["Bash(npm:*)"]).decide(sandboxed, command)
    ).behavior is DENY
    assert (
        await _engine(work, ask_rules=["Bash(npm:*)"]).decide(sandboxed, command)
    ).behavior is ASK
    assert (await _engine(work).decide(sandboxed, {"command": "cat ~/.ssh/id_rsa"})).behavior is ASK
    # Without auto-allow, a sandbox changes nothing about the decision.
    plain = Bash(sandbox=_Sandbox(auto_allow=False))
    assert (await _engine(work).decide(plain, command)).behavior is ASK


def test_bubblewrap_does_not_auto_allow_by_default(bwrap_ok):
    assert BubblewrapSandbox(check=False).auto_allow is False


async def test_glob_patterns_that_leave_the_work_dir_ask(work, tmp_path):
    # The walk starts at the pattern's literal directory, so that is what is checked.
    (tmp_path / "secret.txt").write_text("s")
    (work / "out").symlink_to(tmp_path)
    engine = _engine(work)
    for pattern in ("../*", "../**/*.txt", "out/*", "src/../../*.txt"):
        decision = await engine.decide(Glob(), {"pattern": pattern})
        assert decision.behavior is ASK, pattern
    inside = await engine.decide(Glob(), {"pattern": "*", "path": "out/.."})
    assert inside.behavior is ASK  # out/.. is tmp_path's parent, as the kernel resolves it
    for pattern in ("src/**/*.py", "**/*", "src/*.py"):
        assert (await engine.decide(Glob(), {"pattern": pattern})).behavior is ALLOW, pattern
    nested = await engine.decide(Glob(), {"pattern": "../*", "path": "src"})
    assert nested.behavior is ALLOW  # src/.. is the work dir itself
