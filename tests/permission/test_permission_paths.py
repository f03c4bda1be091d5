"""Path rules on resolved real paths, sensitive paths, and path rule suggestions."""

from __future__ import annotations

import os
from collections.abc import Sequence

import pytest
from permission_workspace import Workspace, permission_context

from tether.permission import (
    FileAccess,
    PermissionBehavior,
    PermissionContext,
    PermissionMode,
    PermissionRule,
    check_path_access,
    is_sensitive_path,
    match_path_rule,
    suggest_path_rules,
)

ALLOW, ASK, DENY = PermissionBehavior.ALLOW, PermissionBehavior.ASK, PermissionBehavior.DENY


def _rule(text: str, behavior: PermissionBehavior = ALLOW) -> PermissionRule:
    return PermissionRule.parse(text, behavior=behavior)


@pytest.mark.parametrize(
    ("rule", "path", "expected"),
    [
        ("Edit(src/**)", "src/app.py", True),
        ("Edit(src/**)", "src/pkg/mod.py", True),
        ("Edit(src/**)", "src/../README.md", False),
        ("Edit(src/**)", "src/../../outside/cron.d/x", False),
        ("Edit(src/**)", "src/link_ssh/id_rsa", False),  # symlink out of src
        ("Edit(*.py)", "src/pkg/mod.py", True),  # no slash: any depth
        ("Edit(/README.md)", "README.md", True),  # leading slash: anchored to the work dir
        ("Edit(/README.md)", "src/README.md", False),
        ("Edit(./src/**)", "src/app.py", True),
        ("Read(//tmp/**)", "/tmp/x.txt", True),  # `//` is absolute
        ("Read(~/.aws/**)", "~/.aws/credentials", True),
        ("Read(../outside/**)", "../outside/data.txt", True),
        ("Read(src/../../outside/**)", "../outside/data.txt", False),  # a middle `..` never matches
        ("Read(link_out/**)", "link_out/data.txt", False),  # allow: the real path only
        ("Edit(SRC/**)", "src/app.py", False),  # allow rules are exact about case
    ],
)
def test_match_path_rule_allow(ws: Workspace, rule: str, path: str, expected: bool) -> None:
    assert match_path_rule(_rule(rule), path, permission_context(ws), cwd=str(ws.root)) is expected


@pytest.mark.parametrize(
    ("rule", "path"),
    [
        ("Read(link_out/**)", "link_out/data.txt"),  # the path as written
        ("Read(//**/outside/**)", "link_out/data.txt"),  # the real path
        ("Read(secret/**)", "SECRET/key.txt"),  # case folded
        ("Read(SECRET/**)", "secret/key.txt"),
        ("Read(secret/)", "secret"),  # directory pattern on the directory itself
        ("Read(.ENV)", ".env"),
    ],
)
def test_deny_rules_match_written_and_real_path_ignoring_case(
    ws: Workspace, rule: str, path: str
) -> None:
    assert match_path_rule(_rule(rule, DENY), path, permission_context(ws), cwd=str(ws.root))


def test_rule_without_specifier(ws: Workspace) -> None:
    assert match_path_rule(_rule("Read"), "src/app.py", permission_context(ws), cwd=str(ws.root))
    assert not match_path_rule(
        _rule("Read"), ".env", permission_context(ws), cwd=str(ws.root)
    )  # sensitive
    assert match_path_rule(_rule("Read", DENY), ".env", permission_context(ws), cwd=str(ws.root))


def test_check_path_access_matrix(ws: Workspace) -> None:
    cwd = str(ws.root)

    def check(
        path: str,
        access: FileAccess,
        mode: PermissionMode = PermissionMode.DEFAULT,
        *,
        allow: Sequence[str] = (),
        deny: Sequence[str] = (),
        ask: Sequence[str] = (),
    ) -> PermissionBehavior:
        tool = "Write" if access == "write" else "Read"
        ctx = permission_context(ws, mode, allow=allow, deny=deny, ask=ask)
        return check_path_access(tool, path, access, ctx, cwd=cwd).behavior

    assert check("src/app.py", "read") is ALLOW
    assert check("src/app.py", "write") is ASK
    assert check("src/app.py", "write", PermissionMode.ACCEPT_EDITS) is ALLOW
    assert check("src/app.py", "write", PermissionMode.EXPLORE) is DENY
    assert check("src/app.py", "write", PermissionMode.DONT_ASK) is DENY
    assert check(str(ws.outside / "data.txt"), "read") is ASK
    assert check(str(ws.outside / "data.txt"), "write", PermissionMode.ACCEPT_EDITS) is ASK
    assert check("link_out/data.txt", "read") is ASK  # symlink out
    assert check("notes.txt", "read") is ASK  # innocent name, links to a key
    for sensitive in (".env", ".git/config", ".git/hooks/pre-commit", "~/.ssh/id_rsa", "~/.bashrc"):
        assert check(sensitive, "read") is ASK, sensitive
        assert check(sensitive, "write", PermissionMode.ACCEPT_EDITS) is ASK, sensitive
    assert check(".env.example", "read") is ALLOW
    assert check("/dev/null", "write") is ALLOW
    assert check("bad\x00path", "read") is DENY
    # Edit rules cover Write, Read deny rules cover writes, Edit allow rules allow reads.
    assert check("src/new.py", "write", allow=["Edit(src/**)"]) is ALLOW
    assert (
        check("secret/key.txt", "write", PermissionMode.ACCEPT_EDITS, deny=["Read(secret/**)"])
        is DENY
    )
    assert check("../outside/data.txt", "read", allow=["Edit(../outside/**)"]) is ALLOW
    assert check("../outside/data.txt", "write", allow=["Read(../outside/**)"]) is ASK
    assert check("src/app.py", "read", ask=["Read(src/**)"]) is ASK
    assert check(".env", "read", allow=["Read(.env)"]) is ALLOW


def test_check_path_access_reason_and_suggestion(ws: Workspace) -> None:
    decision = check_path_access(
        "Write", "src/pkg/new.py", "write", permission_context(ws), cwd=str(ws.root)
    )
    assert decision.behavior is ASK and "confirmation" in decision.reason
    assert [str(r) for r in decision.suggested_rules] == ["Edit(src/pkg/**)"]
    sensitive = check_path_access("Read", ".env", "read", permission_context(ws), cwd=str(ws.root))
    assert sensitive.safety_check and sensitive.suggested_rules == [] and ".env" in sensitive.reason


def test_empty_work_dirs_mean_the_process_cwd(
    ws: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ws.root)
    ctx = PermissionContext()
    assert check_path_access("Read", "README.md", "read", ctx, cwd=os.getcwd()).behavior is ALLOW
    assert (
        check_path_access(
            "Read", str(ws.outside / "data.txt"), "read", ctx, cwd=os.getcwd()
        ).behavior
        is ASK
    )


def test_suggest_path_rules(ws: Workspace) -> None:
    ctx, cwd = permission_context(ws), str(ws.root)
    assert [str(r) for r in suggest_path_rules("Write", "src/pkg/new.py", ctx, cwd=cwd)] == [
        "Edit(src/pkg/**)"
    ]
    assert [str(r) for r in suggest_path_rules("Edit", "README.md", ctx, cwd=cwd)] == [
        "Edit(/README.md)"
    ]
    assert [
        str(r) for r in suggest_path_rules("Read", str(ws.outside / "data.txt"), ctx, cwd=cwd)
    ] == [f"Read(/{ws.outside}/data.txt)"]
    assert [str(r) for r in suggest_path_rules("Grep", "~/notes/x.txt", ctx, cwd=cwd)] == [
        "Read(~/notes/x.txt)"
    ]
    # Never a folder above a work dir: the parent holds it.
    assert [str(r) for r in suggest_path_rules("Write", "../x.txt", ctx, cwd=cwd)] == [
        f"Edit(/{ws.root.parent}/x.txt)"
    ]
    assert suggest_path_rules("LS", "..", ctx, cwd=cwd) == []
    assert suggest_path_rules("Write", ".env", ctx, cwd=cwd) == []
    # A suggestion, once accepted, allows the path it was made for.
    for path in ("src/pkg/new.py", "README.md", str(ws.outside / "data.txt")):
        rule = suggest_path_rules("Edit", path, ctx, cwd=cwd)[0]
        assert match_path_rule(rule, path, ctx, cwd=cwd), rule


@pytest.mark.parametrize(
    "path",
    [
        "~/.ssh/id_rsa",
        "~/.ssh",
        "~/.SSH/config",
        "~/.aws/credentials",
        "~/.config/gcloud/creds.json",
        "~/.gnupg/x",
        "~/.kube/config",
        "~/.bashrc",
        "~/.zshrc",
        "~/.profile",
        "~/.netrc",
        "~/.git-credentials",
        "/work/.env",
        "/work/.env.local",
        "/work/.ENV",
        "/srv/app/.git/config",
        "/srv/app/.git/hooks/pre-push",
        "/etc/shadow",
        "/etc/sudoers.d/x",
        "/proc/self/environ",
        "/k/server.pem",
        "/k/id_ed25519",
        "/k/tls.key",
    ],
)
def test_sensitive_paths(path: str) -> None:
    assert is_sensitive_path(path)


@pytest.mark.parametrize(
    "path",
    [
        "/work/src/app.py",
        "/work/.env.example",
        "/work/README.md",
        "/etc/hosts",
        "/work/.gitignore",
        "/work/keys.txt",
    ],
)
def test_not_sensitive_paths(path: str) -> None:
    assert not is_sensitive_path(path)


def test_sensitive_through_a_symlink(ws: Workspace) -> None:
    assert is_sensitive_path(str(ws.root / "notes.txt"))
    assert is_sensitive_path(str(ws.root / "src" / "link_ssh" / "anything"))
