"""Issue 13, item 7: a repository's own config may make read-only git commands run programs.

`git status` in a work dir whose `.git/config` sets `core.fsmonitor` ran that program
without asking. Every program-running key asks now, wherever git reads it from.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionMode,
    check_shell_command,
    is_read_only_command,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY
pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = Path(os.path.realpath(tmp_path)) / "repo"
    path.mkdir()
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    (path / "a.txt").write_text("a\n")
    return path


def _decide(repo: Path, command: str = "git status", cwd: Path | None = None, **kw):
    context = PermissionContext(working_directories=[str(repo)], **kw)
    return check_shell_command(command, context, cwd=str(cwd or repo)).behavior


def _append(path: Path, text: str) -> None:
    with path.open("a") as f:
        f.write(text)


PROGRAM_KEYS = [
    ("core", "fsmonitor", "touch pwned"),
    ("core", "pager", "sh -c id"),
    ("core", "editor", "vim"),
    ("core", "sshCommand", "ssh -oProxyCommand=x"),
    ("core", "hooksPath", "/tmp/hooks"),
    ("core", "askPass", "x"),
    ("core", "gitProxy", "x"),
    ("core", "alternateRefsCommand", "x"),
    ("core", "worktree", "/etc"),
    ("diff", "external", "x"),
    ('diff "pdf"', "textconv", "x"),
    ('diff "pdf"', "command", "x"),
    ('filter "lfs"', "process", "x"),
    ('filter "lfs"', "clean", "x"),
    ('filter "lfs"', "smudge", "x"),
    ('merge "ours"', "driver", "x"),
    ("uploadpack", "packObjectsHook", "x"),
    ("pager", "log", "x"),
    ("pager", "status", "x"),
    ("alias", "st", "!sh -c id"),
    ("gpg", "program", "x"),
    ('gpg "ssh"', "program", "x"),
    ('gpg "ssh"', "defaultKeyCommand", "x"),
    ("credential", "helper", "!x"),
    ('credential "https://e"', "helper", "x"),
    ("sequence", "editor", "x"),
    ("ssh", "variant", "x"),
    ("interactive", "diffFilter", "x"),
    ('difftool "x"', "cmd", "x"),
    ('mergetool "x"', "cmd", "x"),
    ('browser "x"', "cmd", "x"),
    ("web", "browser", "x"),
    ('man "x"', "cmd", "x"),
    ("imap", "tunnel", "x"),
    ("sendemail", "sendmailCmd", "x"),
    ('trailer "x"', "command", "x"),
    ('hook "x"', "command", "x"),
    ('remote "origin"', "uploadpack", "x"),
    ('submodule "x"', "update", "!x"),
    ("diff", "tool", "x"),
]


@pytest.mark.parametrize(("section", "key", "value"), PROGRAM_KEYS)
def test_every_program_running_key_asks(repo: Path, section: str, key: str, value: str) -> None:
    assert _decide(repo) is ALLOW
    _append(repo / ".git" / "config", f"[{section}]\n\t{key} = {value}\n")
    for command in ("git status", "git log", "git diff", "git show HEAD"):
        assert _decide(repo, command) is ASK, (section, key, command)
    assert not is_read_only_command("git status", cwd=str(repo))


def test_keys_in_included_files_ask(repo: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra.cfg"
    extra.write_text("[core]\n\tpager = x\n")
    _append(repo / ".git" / "config", f"[include]\n\tpath = {extra}\n")
    assert _decide(repo) is ASK
    extra.write_text("[core]\n\tautocrlf = false\n")
    assert _decide(repo) is ALLOW  # checked at decision time, not remembered


def test_keys_in_conditional_and_relative_includes_ask(repo: Path) -> None:
    (repo / ".git" / "more.cfg").write_text('[filter "x"]\n\tprocess = y\n')
    _append(repo / ".git" / "config", '[includeIf "gitdir:/nowhere/"]\n\tpath = more.cfg\n')
    assert _decide(repo) is ASK


def test_the_worktree_config_and_linked_worktrees_are_read(repo: Path, tmp_path: Path) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@e",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@e",
    }
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-qm", "x"], check=True, env=env)
    linked = Path(os.path.realpath(tmp_path)) / "linked"
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(linked)], check=True)
    assert _decide(linked, cwd=linked) is ALLOW
    _append(repo / ".git" / "config", "[core]\n\tfsmonitor = x\n")
    assert _decide(linked, cwd=linked) is ASK  # the common config, through `commondir`
    (repo / ".git" / "config").write_text("[core]\n\trepositoryformatversion = 1\n")
    (repo / ".git" / "worktrees" / "linked" / "config.worktree").write_text("[core]\n\tpager = x\n")
    # git reads config.worktree only with `extensions.worktreeConfig` (checked with git).
    pager = ["git", "-C", str(linked), "config", "--get", "core.pager"]
    assert subprocess.run(pager, capture_output=True, text=True).stdout == ""
    assert _decide(linked, cwd=linked) is ALLOW
    _append(repo / ".git" / "config", "[extensions]\n\tworktreeConfig = true\n")
    assert subprocess.run(pager, capture_output=True, text=True).stdout.strip() == "x"
    assert _decide(linked, cwd=linked) is ASK


def test_a_subdirectory_finds_the_repository_above(repo: Path) -> None:
    (repo / "src").mkdir()
    _append(repo / ".git" / "config", "[core]\n\tfsmonitor = x\n")
    assert _decide(repo, cwd=repo / "src") is ASK
    assert _decide(repo, "cd src && git status") is ASK


def test_a_bare_repository_as_the_cwd_is_read(tmp_path: Path) -> None:
    bare = Path(os.path.realpath(tmp_path)) / "bare"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    assert _decide(bare, "git log", cwd=bare) is ALLOW
    _append(bare / "config", "[core]\n\tpager = x\n")
    assert _decide(bare, "git log", cwd=bare) is ASK


def test_an_index_hook_asks(repo: Path) -> None:
    assert _decide(repo) is ALLOW
    hook = repo / ".git" / "hooks" / "post-index-change"
    hook.write_text("#!/bin/sh\ntouch pwned\n")
    hook.chmod(0o755)
    assert _decide(repo) is ASK
    hook.rename(repo / ".git" / "hooks" / "reference-transaction")
    assert _decide(repo) is ASK
    (repo / ".git" / "hooks" / "reference-transaction").unlink()
    assert _decide(repo) is ALLOW


def test_a_planted_commondir_is_seen(repo: Path, tmp_path: Path) -> None:
    assert _decide(repo) is ALLOW
    evil = tmp_path / "evil"
    evil.mkdir()
    (evil / "config").write_text("[core]\n\tfsmonitor = x\n")
    (repo / ".git" / "commondir").write_text(str(evil) + "\n")
    assert _decide(repo) is ASK


def test_a_config_git_would_reject_asks(repo: Path) -> None:
    _append(repo / ".git" / "config", '[core "unterminated\n')
    assert _decide(repo) is ASK


def test_a_continued_value_does_not_hide_a_key(repo: Path) -> None:
    # The `[foo]` is part of `core.x`'s value: `fsmonitor` is a key of `[core]`.
    _append(repo / ".git" / "config", "[core]\n\tx = a \\\n[foo]\n\tfsmonitor = evil\n")
    assert _decide(repo) is ASK


def test_harmless_keys_and_other_commands_are_unaffected(repo: Path) -> None:
    _append(repo / ".git" / "config", '[color]\n\tui = auto\n[remote "origin"]\n\turl = x\n')
    assert _decide(repo) is ALLOW
    _append(repo / ".git" / "config", "[core]\n\tpager = x\n")
    assert _decide(repo, "ls") is ALLOW  # only git reads it
    explore = PermissionContext(mode=PermissionMode.EXPLORE, working_directories=[str(repo)])
    assert check_shell_command("git status", explore, cwd=str(repo)).behavior is not ALLOW


@pytest.mark.parametrize(
    "prefix",
    [
        "GIT_CONFIG_COUNT=1 GIT_CONFIG_KEY_0=core.pager GIT_CONFIG_VALUE_0=x ",
        "GIT_CONFIG_PARAMETERS=\"'core.pager=x'\" ",
        "GIT_CONFIG=/tmp/c ",
        "GIT_CONFIG_GLOBAL=/tmp/c ",
        "GIT_DIR=/tmp/x ",
        "env GIT_CONFIG_COUNT=1 ",
        "export GIT_CONFIG_COUNT=1; ",
    ],
)
def test_git_config_from_the_environment_asks(repo: Path, prefix: str) -> None:
    assert _decide(repo, prefix + "git status") is ASK
