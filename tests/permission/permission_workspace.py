"""A real work dir on disk with the traps the adversarial tests need, and contexts on it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from tether.permission import PermissionContext, PermissionMode


@dataclass
class Workspace:
    root: Path
    """The work dir (real path)."""
    home: Path
    """A fake `$HOME` with credentials in it."""
    outside: Path
    """A directory outside the work dir."""


def make_workspace(tmp_path: Path) -> Workspace:
    base = Path(os.path.realpath(tmp_path))
    root, home, outside = base / "work", base / "home", base / "outside"
    for d in (
        root / "src" / "pkg",
        root / "secret",
        root / ".git" / "hooks",
        home / ".ssh",
        home / ".aws",
        outside / "cron.d",
    ):
        d.mkdir(parents=True)
    (root / "README.md").write_text("hello\n")
    (root / "src" / "app.py").write_text("print('hi')\n")
    (root / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    (root / ".env").write_text("TOKEN=abc\n")
    (root / ".env.example").write_text("TOKEN=\n")
    (root / ".git" / "config").write_text("[core]\n")
    (root / "secret" / "key.txt").write_text("k\n")
    (home / ".ssh" / "id_rsa").write_text("PRIVATE\n")
    (home / ".aws" / "credentials").write_text("[default]\n")
    (home / ".bashrc").write_text("# rc\n")
    (outside / "data.txt").write_text("outside\n")
    # Symlinks that lead out of the work dir.
    (root / "link_out").symlink_to(outside)
    (root / "src" / "link_ssh").symlink_to(home / ".ssh")
    (root / "notes.txt").symlink_to(home / ".ssh" / "id_rsa")
    return Workspace(root=root, home=home, outside=outside)


def permission_context(
    where: Workspace | Path,
    mode: PermissionMode = PermissionMode.DEFAULT,
    *,
    allow: Sequence[str] = (),
    deny: Sequence[str] = (),
    ask: Sequence[str] = (),
    dirs: Sequence[Path] | None = None,
) -> PermissionContext:
    """A context with these rules, working in `dirs` (default: the workspace's work dir)."""
    root = where.root if isinstance(where, Workspace) else where
    return PermissionContext(
        mode=mode,
        allow_rules=list(allow),
        deny_rules=list(deny),
        ask_rules=list(ask),
        working_directories=[str(d) for d in (dirs or [root])],
    )
