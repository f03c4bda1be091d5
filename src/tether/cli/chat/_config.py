"""Settings of `tether chat`: config files (user, then project) and `.mcp.json`.

```toml
model = "openai:gpt-4o"            # else --model or TETHER_MODEL
skills = [".tether/skills"]        # folders of SKILL.md folders
plugins = ["my_pkg.plugins:notes"] # module:attribute, a Plugin (or a callable making one)

[permissions]
mode = "accept_edits"              # default | accept_edits | explore | bypass | dont_ask
allow = ["Bash(git diff:*)"]
ask = []
deny = ["Bash(rm:*)"]

[context]                          # tether.context.ContextConfig fields
trigger_ratio = 0.8
reserve_ratio = 0.2

[mcp_servers.time]                 # or {url = "...", headers = {...}}
command = "mcp-server-time"
args = []
trust_annotations = false          # true: its read-only tools run without asking
```

The project file (`.tether/config.toml`, or `--config FILE`) wins over the user's
(`~/.config/tether/config.toml`), key by key; `[permissions]` rules add up. Servers in the
project's `.mcp.json` (`{"mcpServers": {name: {command, args, env} | {url, headers}}}`)
come first, so a config entry of the same name wins.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.cli.chat._args import MODES
from tether.errors import ChatConfigError

__all__ = ["ChatSettings", "load_settings", "user_config_path"]

_TOP = {"model", "skills", "plugins", "permissions", "mcp_servers", "context"}
_PERMISSION_KEYS = {"mode", "allow", "ask", "deny"}


@dataclass(frozen=True, slots=True)
class ChatSettings:
    """What the config files say (flags are applied on top by the caller)."""

    model: str | None = None
    mode: str | None = None
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)
    skills: tuple[str, ...] = ()
    plugins: tuple[str, ...] = ()
    context: dict[str, Any] = field(default_factory=dict)
    """`ContextConfig` fields."""
    files: tuple[str, ...] = ()
    """The files read, in order."""


def user_config_path() -> Path:
    """`$XDG_CONFIG_HOME/tether/config.toml`, else `~/.config/tether/config.toml`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tether" / "config.toml"


def load_settings(cwd: Path, config_file: str | None = None) -> ChatSettings:
    """Read the user config, the project config (or `config_file`) and `.mcp.json`."""
    project = Path(config_file) if config_file else cwd / ".tether" / "config.toml"
    if config_file and not project.is_file():
        raise ChatConfigError(f"--config {config_file!r}: no such file")
    layers = [(p, _read_toml(p)) for p in (user_config_path(), project) if p.is_file()]
    merged: dict[str, Any] = {}
    rules: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    servers = _mcp_json(cwd / ".mcp.json")
    for path, data in layers:
        _check(path, data)
        permissions = data.get("permissions", {})
        for key in rules:
            rules[key] += _strings(path, f"permissions.{key}", permissions.get(key, []))
        if "mode" in permissions:
            merged["mode"] = _mode(path, permissions["mode"])
        for key in ("model", "skills", "plugins"):
            if key in data:
                merged[key] = data[key]
        merged["context"] = {
            **merged.get("context", {}),
            **_table(path, "context", data.get("context", {})),
        }
        for name, server in _table(path, "mcp_servers", data.get("mcp_servers", {})).items():
            servers[name] = _server(path, name, server)
    model = merged.get("model")
    if model is not None and not isinstance(model, str):
        raise ChatConfigError(f"{layers[-1][0]}: `model` must be a string like 'openai:gpt-4o'")
    where = layers[-1][0] if layers else project
    return ChatSettings(
        model=model,
        mode=merged.get("mode"),
        allow=tuple(rules["allow"]),
        ask=tuple(rules["ask"]),
        deny=tuple(rules["deny"]),
        mcp_servers=servers,
        skills=tuple(_strings(where, "skills", merged.get("skills", []))),
        plugins=tuple(_strings(where, "plugins", merged.get("plugins", []))),
        context=merged.get("context", {}),
        files=tuple(str(p) for p, _ in layers),
    )


def _read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # only when there is a config file: most starts have none

    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ChatConfigError(f"cannot read config {str(path)!r}: {exc}") from None


def _check(path: Path, data: dict[str, Any]) -> None:
    unknown = sorted(set(data) - _TOP)
    if unknown:
        raise ChatConfigError(f"{path}: unknown keys {unknown}; known: {sorted(_TOP)}")
    permissions = _table(path, "permissions", data.get("permissions", {}))
    unknown = sorted(set(permissions) - _PERMISSION_KEYS)
    if unknown:
        raise ChatConfigError(
            f"{path}: unknown keys {unknown} in [permissions]; known: {sorted(_PERMISSION_KEYS)}"
        )


def _table(path: Path, name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ChatConfigError(f"{path}: `{name}` must be a table")
    return value


def _strings(path: Path | str, name: str, value: Any) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ChatConfigError(f"{path}: `{name}` must be a list of strings")
    return list(value)


def _mode(path: Path, value: Any) -> str:
    if value not in MODES:
        raise ChatConfigError(f"{path}: permissions.mode {value!r} is not one of {list(MODES)}")
    return str(value)


def _server(path: Path, name: str, value: Any) -> dict[str, Any]:
    if not isinstance(value, dict) or ("command" in value) == ("url" in value):
        raise ChatConfigError(
            f"{path}: MCP server {name!r} needs either `command` (with `args`, `env`) or "
            "`url` (with `headers`)"
        )
    allowed = {"command", "args", "env", "cwd"} if "command" in value else {"url", "headers"}
    unknown = sorted(set(value) - allowed - {"type", "timeout", "trust_annotations"})
    if unknown:
        raise ChatConfigError(f"{path}: MCP server {name!r} has unknown keys {unknown}")
    return dict(value)


def _mcp_json(path: Path) -> dict[str, dict[str, Any]]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ChatConfigError(f"cannot read {str(path)!r}: {exc}") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise ChatConfigError(f'{path}: expected {{"mcpServers": {{name: {{...}}}}}}')
    return {str(name): _server(path, str(name), spec) for name, spec in servers.items()}
