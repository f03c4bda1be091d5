"""Security review: places where the checker judged something other than what bash runs.

Each group is one hole: the command or path, the decision it used to get, and what bash,
the kernel or the tool really does (shown with a real bash where that can be run).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import pytest
from permission_fakes import FakeBash, FakeFileTool
from permission_workspace import Workspace, permission_context

from tether.permission import (
    PermissionBehavior,
    PermissionEngine,
    PermissionMode,
    check_path_access,
    check_shell_command,
    is_sensitive_path,
)
from tether.permission._sensitive import sensitive_token

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


def _check(ws: Workspace, command: str, **kw: Any) -> PermissionBehavior:
    return check_shell_command(command, permission_context(ws, **kw), cwd=str(ws.root)).behavior


async def _engine(ws: Workspace, command: str, **kw: Any) -> PermissionBehavior:
    ctx = permission_context(ws, **kw)
    return (await PermissionEngine(ctx).decide(FakeBash(), {"command": command})).behavior


def _bash(command: str, cwd: Path) -> str:
    """What a real bash prints for `command`, run the way the Bash tool runs it."""
    done = subprocess.run(
        ["bash", "--noprofile", "--norc", "-c", 'eval "$1"', "bash", command],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout


# --- words after a redirect are arguments, not lost ------------------------------------
# The grammar hangs `cat 2>/dev/null x`'s `x` on the redirect; it was dropped, so the
# checker saw a bare `cat` (allowed) while bash read `x`.


@pytest.mark.parametrize(
    "command",
    [
        "cat README.md 2>/dev/null ~/.ssh/id_rsa",
        "cat 2>/dev/null ../outside/data.txt",
        "cat 1>&2 ../outside/data.txt",
        "cat < README.md ../outside/data.txt",
        "ls 2>/dev/null ..",
        "ls | cat 2>/dev/null ../outside/data.txt",
        "ls && cat 2>&1 ../outside/data.txt",
        "cat <<EOF ../outside/data.txt\nx\nEOF",
        "{ ls; } 2>/dev/null ../outside/data.txt",
    ],
)
def test_words_after_a_redirect_are_checked(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK


def test_words_after_a_redirect_really_are_read(ws: Workspace) -> None:
    assert _bash("cat 2>/dev/null ../outside/data.txt", ws.root) == "outside\n"
    assert _check(ws, "cat 2>/dev/null README.md") is ALLOW  # still fine inside


async def test_words_after_a_redirect_meet_the_rules(ws: Workspace) -> None:
    bypass: dict[str, Any] = {"mode": PermissionMode.BYPASS, "deny": ["Bash(git push:*)"]}
    assert _check(ws, "git 2>/dev/null push --force", **bypass) is DENY
    assert await _engine(ws, "make 2>/dev/null install", allow=["Bash(make)"]) is ASK


# --- here-documents whose end bash sees elsewhere --------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat <<$'EOF'\nx\nEOF\ntouch pwned\nEOF\n$'EOF'",  # bash's delimiter is EOF
        "cat <<EOF\n`touch pwned`\nEOF",  # backticks run in an unquoted body
    ],
)
def test_commands_hidden_in_a_here_document_ask(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK
    _bash(command, ws.root)
    assert (ws.root / "pwned").exists()  # what the checker must not wave through


def test_plain_here_documents_still_run(ws: Workspace) -> None:
    assert _check(ws, "cat <<'EOF'\n`x` $(y)\nEOF") is ALLOW  # quoted: nothing runs
    assert _check(ws, 'cat <<"EOF"\nhi\nEOF') is ALLOW
    assert _check(ws, "cat <<E\\OF\nhi\nEOF") is ALLOW


# --- `~+`, `~-` and `~N` are directories, not names ---------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cat ~+/../outside/data.txt",
        "ls ~+0/..",
        "cat ~-/x",
        "cd ~- && cat x",
        "cd ~+/.. && cat outside/data.txt",
        "cat ~1/x",
    ],
)
def test_directory_stack_tildes_ask(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK


def test_directory_stack_tilde_really_is_the_cwd(ws: Workspace) -> None:
    assert _bash("cat ~+/../outside/data.txt", ws.root) == "outside\n"


# --- globs match what bash matches ------------------------------------------------------


def test_negated_bracket_with_caret_is_a_negation(ws: Workspace) -> None:
    assert _bash("echo .en[^x]", ws.root) == ".env\n"
    assert _check(ws, "cat .en[^x]") is ASK
    assert _check(ws, "cat secre[^x]/key.txt", deny=["Read(secret/**)"]) is DENY


def test_quoted_glob_characters_stay_literal(ws: Workspace) -> None:
    (ws.root / "[a]out").symlink_to(ws.outside)
    assert _bash('cat "[a]"*/data.txt', ws.root) == "outside\n"
    assert _check(ws, 'cat "[a]"*/data.txt') is ASK
    assert _check(ws, "cat \\[a]*/data.txt") is ASK


@pytest.mark.parametrize("command", ["cat .*/outside/data.txt", "ls .?"])
def test_a_glob_that_may_match_dot_dot_asks(ws: Workspace, command: str) -> None:
    # Bash before 5.2 (no `globskipdots`) lets `.*` match `..`: `.*/outside` is `../outside`.
    assert _check(ws, command) is ASK


def test_ordinary_globs_still_run(ws: Workspace) -> None:
    assert _check(ws, "ls src/*.py *.md") is ALLOW
    assert _check(ws, "cat .env.exa[m]ple") is ALLOW
    assert _check(ws, "cat src/[!z]*.py") is ALLOW


# --- `cd` follows the link before `..` when bash does ----------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "cd link_out/../outside && cat data.txt",
        "cd -P link_out/.. && cat outside/data.txt",
        "cd link_out/../outside; ls",
    ],
)
def test_cd_through_a_link_and_up_asks(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK


def test_cd_through_a_link_and_up_really_leaves(ws: Workspace) -> None:
    # `cd -L` tries `$PWD/outside` (absent), then the path as written, through the link.
    assert _bash("cd link_out/../outside && cat data.txt", ws.root) == "outside\n"


def test_cdpath_is_followed(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CDPATH", str(ws.outside.parent))
    assert _check(ws, "cd outside && cat data.txt") is ASK
    assert _check(ws, "cd ./src && ls") is ALLOW  # `./` skips CDPATH


# --- options that run programs or write, however they are spelled ----------------------


@pytest.mark.parametrize(
    "command",
    [
        "rg --hostname-bin=./evil.sh x",
        "rg --hostname-bin ./evil.sh x",
        "sort --o=src/app.py README.md",  # GNU getopt takes `--o` for `--output`
        "sort --outp src/app.py README.md",
        "sort --compress-prog=./evil.sh README.md",
        "tree -R -H . src",
        "file -C -m magic",
        "date --s=2020-01-01",
        "sort --files0-from=list README.md",  # reads (and prints) the files named in `list`
        "sha256sum -c sums",  # reads the files named in `sums`
    ],
)
def test_read_only_commands_that_run_or_write_ask(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK


def test_an_operand_after_double_dash_counts(ws: Workspace) -> None:
    assert _check(ws, "uniq README.md -- -out") is ASK
    _bash("uniq README.md -- -out", ws.root)
    assert (ws.root / "-out").read_text() == "hello\n"  # uniq's second operand is its output
    assert _check(ws, "uniq -c -- README.md") is ALLOW


def test_an_abbreviated_long_option_really_writes(ws: Workspace) -> None:
    _bash("sort --o=out.txt README.md", ws.root)
    assert (ws.root / "out.txt").read_text() == "hello\n"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("Bash(tar:*)", "tar --to-com=sh -xf x.tar"),
        ("Bash(tar:*)", "tar -F ./evil.sh -M -cf x.tar src"),
        ("Bash(tar:*)", "tar --new-volume-script=./evil.sh -cf x.tar src"),
        ("Bash(ssh:*)", "ssh -oProxyCommand=./evil.sh host"),
        ("Bash(rsync:*)", "rsync -avze ./evil.sh a host:b"),
        ("Bash(sort:*)", "sort --compress=./evil.sh README.md"),
    ],
)
async def test_allowed_commands_with_spelled_out_risky_options_ask(
    ws: Workspace, rule: str, command: str
) -> None:
    assert await _engine(ws, command, allow=[rule]) is ASK


async def test_allowed_commands_with_plain_options_still_run(ws: Workspace) -> None:
    assert await _engine(ws, "tar -czf x.tar src", allow=["Bash(tar:*)"]) is ALLOW
    assert await _engine(ws, "rsync -avz src host:b", allow=["Bash(rsync:*)"]) is ALLOW
    assert _check(ws, "git log --oneline -3") is ALLOW
    assert _check(ws, "sort -r README.md") is ALLOW


# --- a sensitive path reached by `..` after a link ------------------------------------


@pytest.fixture
def keys(ws: Workspace) -> Workspace:
    (ws.home / ".ssh" / "old").mkdir()
    (ws.home / ".ssh" / "authorized_keys").write_text("ssh-ed25519 x\n")
    (ws.root / "keys").symlink_to(ws.home / ".ssh" / "old")
    return ws


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("Bash(cat:*)", "cat keys/../authorized_keys"),
        ("Bash(cp:*)", "cp README.md keys/../authorized_keys"),
    ],
)
async def test_allow_rule_does_not_reach_a_key_through_a_link(
    keys: Workspace, rule: str, command: str
) -> None:
    assert _bash("cat keys/../authorized_keys", keys.root) == "ssh-ed25519 x\n"
    assert await _engine(keys, command, allow=[rule]) is ASK


def test_sensitive_token_climbs_from_the_link_target(keys: Workspace) -> None:
    assert sensitive_token("keys/../authorized_keys", cwd=str(keys.root)) == ".ssh"


# --- a path ask rule is not overridden by a Bash allow rule ----------------------------


@pytest.mark.parametrize("allow", [["Bash(cat:*)"], ["Bash"]])
async def test_path_ask_rule_holds_under_a_bash_allow_rule(ws: Workspace, allow: list[str]) -> None:
    assert await _engine(ws, "cat secret/key.txt", allow=allow, ask=["Read(secret/**)"]) is ASK


async def test_path_ask_rule_holds_in_bypass_like_for_the_read_tool(ws: Workspace) -> None:
    kw: dict[str, Any] = {"mode": PermissionMode.BYPASS, "ask": ["Read(secret/**)"]}
    assert await _engine(ws, "cat secret/key.txt", **kw) is ASK
    ctx = permission_context(ws, PermissionMode.BYPASS, ask=["Read(secret/**)"])
    read = await PermissionEngine(ctx).decide(
        FakeFileTool("Read", "read"), {"path": "secret/key.txt"}
    )
    assert read.behavior is ASK
    assert await _engine(ws, "cat README.md", **kw) is ALLOW


# --- git's own code-running files beyond .git/config and .git/hooks ---------------------


@pytest.mark.parametrize(
    "path",
    [
        ".git/modules/sub/config",
        ".git/modules/sub/hooks/post-checkout",
        ".git/worktrees/w/config.worktree",
        ".git/config.worktree",
        ".git/commondir",
    ],
)
def test_git_files_that_name_programs_are_sensitive(ws: Workspace, path: str) -> None:
    ctx = permission_context(ws, PermissionMode.ACCEPT_EDITS)
    assert check_path_access("Write", path, "write", ctx, cwd=str(ws.root)).behavior is ASK
    assert is_sensitive_path(os.path.join(ws.root, path))


def test_ordinary_git_files_are_not_sensitive(ws: Workspace) -> None:
    ctx = permission_context(ws, PermissionMode.ACCEPT_EDITS)
    for path in (".git/HEAD", ".github/workflows/ci.yml", "src/config.py"):
        assert check_path_access("Write", path, "write", ctx, cwd=str(ws.root)).behavior is ALLOW


# --- lines and words the grammar joins or splits unlike bash ---------------------------


def test_a_line_starting_with_a_backslash_is_a_command(ws: Workspace) -> None:
    (ws.root / "victim").mkdir()
    command = "ls\n\\rm -rf victim"  # the grammar made `<newline>\rm` a word of `ls`
    assert _check(ws, command) is ASK
    assert _check(ws, command, deny=["Bash(rm:*)"]) is DENY
    _bash(command, ws.root)
    assert not (ws.root / "victim").exists()


def test_a_line_continuation_inside_a_word_joins_it(ws: Workspace) -> None:
    kw: dict[str, Any] = {"mode": PermissionMode.BYPASS, "deny": ["Bash(rm:*)"]}
    assert _check(ws, "r\\\nm -rf victim", **kw) is DENY  # bash runs `rm -rf victim`
    assert _check(ws, "cat ..\\\n/outside/data.txt") is ASK
    assert _bash("cat ..\\\n/outside/data.txt", ws.root) == "outside\n"


def test_a_redirect_target_continued_on_the_next_line(ws: Workspace) -> None:
    command = "echo hi >src\\\n/../../outside/new.txt"
    assert _check(ws, command, mode=PermissionMode.ACCEPT_EDITS) is ASK
    _bash(command, ws.root)
    assert (ws.outside / "new.txt").read_text() == "hi\n"


@pytest.mark.parametrize(
    "command",
    ["echo a\\\n#`touch pwned`", "echo a\\\t#`touch pwned`"],
)
def test_a_hash_inside_a_word_is_not_a_comment(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK
    _bash(command, ws.root)
    assert (ws.root / "pwned").exists()


@pytest.mark.parametrize("command", ["cat a\\\tb", "cat {\\x", "cat +{ {\t{"])
def test_words_split_unlike_bash_ask(ws: Workspace, command: str) -> None:
    assert _check(ws, command) is ASK


def test_text_the_grammar_drops_asks(ws: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    # The grammar leaves the `-` of `cd - 2>/dev/null` out of the tree: a bare `cd` (home).
    monkeypatch.setenv("HOME", str(ws.root))
    monkeypatch.setenv("OLDPWD", str(ws.outside))
    command = "cd - 2>/dev/null && cat data.txt"
    assert _check(ws, command) is ASK
    assert _bash(command, ws.root) == f"{ws.outside}\noutside\n"


# --- what bash makes of a word ---------------------------------------------------------


async def test_ansi_c_string_ends_at_nul(ws: Workspace) -> None:
    assert _bash("cat $'.env\\x00x'", ws.root) == "TOKEN=abc\n"
    assert await _engine(ws, "cat $'.env\\x00x'", allow=["Bash(cat:*)"]) is ASK


def test_a_colon_ends_the_tilde_prefix(ws: Workspace) -> None:
    (ws.home.parent / "home:").mkdir()
    (ws.home.parent / "home:" / "x").write_text("beside home\n")
    assert _bash("cat ~:/x", ws.root) == "beside home\n"
    assert _check(ws, "cat ~:/x") is ASK
