"""What a project folder would configure: its root, instruction files, and a view of it.

The view is what the trust question shows and what the trust store keeps (per server a
digest of its spec, so a changed command counts as a new server).
"""

from __future__ import annotations

import hashlib
import json
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.cli.chat._config import ChatSettings, user_config_path
from tether.cli.chat._prompt import git_root

__all__ = [
    "Folder",
    "instruction_files",
    "project_root",
    "server_line",
    "user_instructions",
    "view_of",
]

NAMES = ("AGENTS.md", "CLAUDE.md")
"""Instruction file names, preferred first (`CLAUDE.md` is read only without `AGENTS.md`)."""


def project_root(cwd: Path) -> Path:
    """The nearest ancestor of `cwd` holding `.git`, else `cwd`."""
    return git_root(cwd) or cwd


def instruction_files(root: Path, cwd: Path) -> list[Path]:
    """`AGENTS.md` (else `CLAUDE.md`) of the root and of each folder down to `cwd`."""
    folders = [root]
    if cwd != root and cwd.is_relative_to(root):
        for part in cwd.relative_to(root).parts:
            folders.append(folders[-1] / part)
    found: list[Path] = []
    for folder in folders:
        for name in NAMES:
            if (folder / name).is_file():
                found.append(folder / name)
                break
    return found


def user_instructions() -> Path | None:
    """`~/.config/tether/AGENTS.md` (under `$XDG_CONFIG_HOME`), if it exists."""
    path = user_config_path().parent / "AGENTS.md"
    return path if path.is_file() else None


def server_line(spec: dict[str, Any]) -> str:
    """`sh -c 'touch x'` for a command server, the URL for a remote one."""
    if "command" in spec:
        args = [str(a) for a in spec.get("args", [])]
        return shlex.join([str(spec["command"]), *args])
    return str(spec.get("url", ""))


def _digest(value: Any) -> str:
    text = json.dumps(value, sort_keys=True, ensure_ascii=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def agent_files(root: Path) -> dict[str, str]:
    """The folder's sub-agent definitions (`.tether/agents/*.md`): path → content digest."""
    folder = root / ".tether" / "agents"
    if not folder.is_dir():
        return {}
    return {
        str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()[:16]
        for p in sorted(folder.glob("*.md"))
        if p.is_file()
    }


def view_of(settings: ChatSettings, instructions: list[Path], root: Path) -> dict[str, Any]:
    """What the folder would set that can widen what runs (JSON; kept in the trust store)."""
    servers = settings.mcp_servers
    return {
        "model": settings.model,
        "mode": settings.mode,
        "allow": list(settings.allow),
        "mcp_servers": {name: _digest(spec) for name, spec in sorted(servers.items())},
        "trust_annotations": sorted(n for n, s in servers.items() if s.get("trust_annotations")),
        "plugins": list(settings.plugins),
        "skills": list(settings.skills),
        "instructions": [str(p.relative_to(root)) for p in instructions],
        "agents": agent_files(root),
    }


@dataclass(frozen=True, slots=True)
class Folder:
    """A project folder: its root, what it configures, its instruction files."""

    root: Path
    settings: ChatSettings
    instructions: tuple[Path, ...]

    @property
    def view(self) -> dict[str, Any]:
        """See `view_of`."""
        return view_of(self.settings, list(self.instructions), self.root)

    @property
    def configures(self) -> bool:
        """Whether there is anything to trust (more than deny and ask rules)."""
        view = self.view
        return any(view[k] for k in view) or bool(self.settings.context)
