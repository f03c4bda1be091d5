"""Folder trust: the user's answers per project root, and what a folder may set.

An untrusted folder is inert: only its deny and ask rules (which narrow) are used. A
trusted one adds what it configured when the user trusted it; anything that has grown since
(a new or changed MCP server, a new allow rule, a wider mode, another model, plugin or
skills folder) waits for the user to be asked again. Even trusted, a project file cannot
set `bypass`, nor `dont_ask` with a rule allowing a whole tool: only the user can.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from tether.cli.chat._config import ChatSettings
from tether.cli.chat._folder import Folder, server_line
from tether.cli.chat._sessions import tether_home
from tether.errors import ChatConfigError

__all__ = ["LEVELS", "Decision", "TrustRecord", "TrustStore", "decide", "grown"]

LEVELS = ("all", "no_mcp", "none")
"""Trusted; trusted without its MCP servers; not trusted."""
_NARROW_MODES = (None, "default", "explore")


@dataclass(frozen=True, slots=True)
class TrustRecord:
    """One stored answer: the level and the folder's view it was given for."""

    level: str
    view: dict[str, Any]
    at: str = ""


class TrustStore:
    """`$TETHER_HOME/trusted_folders.json`: `{folders: {root: {level, view, at}}}`."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or tether_home() / "trusted_folders.json"

    def _read(self) -> dict[str, Any]:
        if not self.path.is_file():
            return {}
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            folders = data["folders"]
            if not isinstance(folders, dict):
                raise TypeError("folders is not an object")
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ChatConfigError(
                f"cannot read the trusted folders file {str(self.path)!r} ({exc}); "
                "fix or delete it (every folder is then untrusted)"
            ) from None
        return folders

    def get(self, root: Path) -> TrustRecord | None:
        """The answer stored for `root`, if any."""
        entry = self._read().get(str(root))
        if not isinstance(entry, dict) or entry.get("level") not in LEVELS:
            return None
        return TrustRecord(entry["level"], dict(entry.get("view") or {}), str(entry.get("at", "")))

    def folders(self) -> dict[str, TrustRecord]:
        """Every stored answer by root."""
        return {root: rec for root in self._read() if (rec := self.get(Path(root))) is not None}

    def set(self, root: Path, level: str, view: dict[str, Any]) -> TrustRecord:
        """Store `level` for `root`, given for `view`."""
        if level not in LEVELS:
            raise ChatConfigError(f"trust level {level!r} is not one of {list(LEVELS)}")
        folders = self._read()
        record = TrustRecord(level, view, datetime.now(UTC).isoformat(timespec="seconds"))
        folders[str(root)] = {"level": record.level, "view": record.view, "at": record.at}
        self._write(folders)
        return record

    def revoke(self, root: Path) -> bool:
        """Forget `root`; whether it was stored."""
        folders = self._read()
        if folders.pop(str(root), None) is None:
            return False
        self._write(folders)
        return True

    def _write(self, folders: dict[str, Any]) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_name(self.path.name + f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps({"folders": folders}, indent=2, sort_keys=True) + "\n")
        os.replace(temporary, self.path)


@dataclass(frozen=True, slots=True)
class Decision:
    """What of the folder's settings is used, and what was left out (as readable items)."""

    level: str
    project: ChatSettings
    instructions: tuple[Path, ...] = ()
    ignored: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    agents: bool = False
    """Use the folder's sub-agent definitions: they are the ones the user trusted."""


def _items(folder: Folder, settings: ChatSettings | None = None) -> list[str]:
    """Readable items of what a folder sets that can widen (all of it, or `settings`)."""
    s = settings or folder.settings
    items = [f"model {s.model!r}"] if s.model is not None else []
    if s.mode not in _NARROW_MODES:
        items.append(f"permission mode {s.mode!r}")
    items += [f"allow rule {r!r}" for r in s.allow]
    for name, spec in s.mcp_servers.items():
        items.append(f"MCP server {name!r} ({server_line(spec)})")
    items += [f"plugin {p!r}" for p in s.plugins]
    items += [f"skills folder {k!r}" for k in s.skills]
    return items


def grown(folder: Folder, record: TrustRecord | None) -> list[str]:
    """What the folder sets now that widens beyond the view `record` was given for."""
    if record is None:
        items = _items(folder)
        items += [
            f"instruction file {str(p.relative_to(folder.root))!r}" for p in folder.instructions
        ]
        return items + _new_agents(folder, {})
    return _items(folder, _beyond(folder, record.view)) + _new_agents(folder, record.view)


def _new_agents(folder: Folder, old: dict[str, Any]) -> list[str]:
    """Sub-agent definitions added or changed since the view `old` was trusted."""
    before = old.get("agents", {})
    now: dict[str, str] = folder.view["agents"]
    return [f"sub-agent definition {p!r}" for p, d in now.items() if before.get(p) != d]


def _beyond(folder: Folder, old: dict[str, Any]) -> ChatSettings:
    """The settings of the folder not covered by `old` (a stored view)."""
    s, now = folder.settings, folder.view
    servers = {
        name: spec
        for name, spec in s.mcp_servers.items()
        if old.get("mcp_servers", {}).get(name) != now["mcp_servers"][name]
        or (spec.get("trust_annotations") and name not in old.get("trust_annotations", []))
    }
    return ChatSettings(
        model=s.model if s.model != old.get("model") else None,
        mode=s.mode if s.mode != old.get("mode") and s.mode not in _NARROW_MODES else None,
        allow=tuple(r for r in s.allow if r not in old.get("allow", [])),
        mcp_servers=servers,
        plugins=tuple(p for p in s.plugins if p not in old.get("plugins", [])),
        skills=tuple(k for k in s.skills if k not in old.get("skills", [])),
    )


def decide(folder: Folder, record: TrustRecord | None) -> Decision:
    """The part of the folder's settings to use under `record` (None: not trusted)."""
    s = folder.settings
    narrow = ChatSettings(ask=s.ask, deny=s.deny, files=s.files)
    if record is None or record.level == "none":
        ignored = grown(folder, None)
        if s.context:
            ignored.append("[context] settings")
        return Decision("none", narrow, (), ignored)
    extra = _beyond(folder, record.view)
    new_agents = _new_agents(folder, record.view)
    ignored = _items(folder, extra) + new_agents
    servers = {k: v for k, v in s.mcp_servers.items() if k not in extra.mcp_servers}
    if record.level == "no_mcp":  # the user's choice: not reported as ignored
        servers = {}
    used = replace(
        s,
        model=s.model if extra.model is None else None,
        mode=s.mode if extra.mode is None else None,
        allow=tuple(r for r in s.allow if r not in extra.allow),
        mcp_servers=servers,
        plugins=tuple(p for p in s.plugins if p not in extra.plugins),
        skills=tuple(k for k in s.skills if k not in extra.skills),
    )
    refused: list[str] = []
    whole_tool = [r for r in used.allow if "(" not in r]
    if used.mode == "bypass" or (used.mode == "dont_ask" and whole_tool):
        why = "" if used.mode == "bypass" else f" with allow rules {whole_tool}"
        refused.append(
            f"permission mode {used.mode!r}{why} set by {', '.join(s.files) or 'the folder'}: "
            "a project file cannot set it; pass --permission-mode or set it in your own "
            "~/.config/tether/config.toml"
        )
        used = replace(used, mode=None)
    return Decision(record.level, used, folder.instructions, ignored, refused, not new_agents)
