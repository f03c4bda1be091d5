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

The project file (`.tether/config.toml`) wins over the user's
(`~/.config/tether/config.toml`), key by key; `[permissions]` rules add up. Servers in the
project's `.mcp.json` (`{"mcpServers": {name: {command, args, env} | {url, headers}}}`)
come first, so a config entry of the same name wins.

The two are read apart (`load_layers`): what the project folder says is used only as far
as the user trusts the folder (`tether.cli.chat._trust`). `--config FILE` is the user's own
choice, so it is read as part of the user's layer (and the project file is not read).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tether.cli.chat._args import MODES
from tether.errors import ChatConfigError

__all__ = [
    "ChatSettings",
    "Layers",
    "load_layers",
    "load_settings",
    "merge_settings",
    "user_config_path",
]

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
    skills_set: bool = False
    """Whether a file named `skills` (an empty list clears the user's)."""
    plugins: tuple[str, ...] = ()
    plugins_set: bool = False
    context: dict[str, Any] = field(default_factory=dict)
    """`ContextConfig` fields."""
    files: tuple[str, ...] = ()
    """The files read, in order."""


def user_config_path() -> Path:
    """`$XDG_CONFIG_HOME/tether/config.toml`, else `~/.config/tether/config.toml`."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "tether" / "config.toml"


@dataclass(frozen=True, slots=True)
class Layers:
    """The user's settings (their config, or `--config FILE`) and the project folder's."""

    user: ChatSettings
    project: ChatSettings


def load_layers(cwd: Path, config_file: str | None = None) -> Layers:
    """Read the user config (and `config_file`), the project config and `.mcp.json` apart."""
    if config_file and not Path(config_file).is_file():
        raise ChatConfigError(f"--config {config_file!r}: no such file")
    user_files = [user_config_path(), *([Path(config_file)] if config_file else [])]
    project_file = None if config_file else cwd / ".tether" / "config.toml"
    user = _layer([p for p in user_files if p.is_file()], {})
    project_files = [project_file] if project_file is not None and project_file.is_file() else []
    project = _layer(project_files, _mcp_json(cwd / ".mcp.json"))
    return Layers(user, project)


def merge_settings(user: ChatSettings, project: ChatSettings) -> ChatSettings:
    """Both layers as one: the project wins key by key, rules add up, servers by name."""
    return ChatSettings(
        model=project.model if project.model is not None else user.model,
        mode=project.mode if project.mode is not None else user.mode,
        allow=user.allow + project.allow,
        ask=user.ask + project.ask,
        deny=user.deny + project.deny,
        mcp_servers={**user.mcp_servers, **project.mcp_servers},
        skills=project.skills if project.skills_set else user.skills,
        skills_set=user.skills_set or project.skills_set,
        plugins=project.plugins if project.plugins_set else user.plugins,
        plugins_set=user.plugins_set or project.plugins_set,
        context={**user.context, **project.context},
        files=user.files + project.files,
    )


def load_settings(cwd: Path, config_file: str | None = None) -> ChatSettings:
    """Every layer merged, as in a folder the user trusts."""
    layers = load_layers(cwd, config_file)
    return merge_settings(layers.user, layers.project)


def _layer(paths: list[Path], servers: dict[str, dict[str, Any]]) -> ChatSettings:
    """The files of one layer (later wins key by key), over `servers` from `.mcp.json`."""
    merged: dict[str, Any] = {}
    rules: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    servers = dict(servers)
    for path in paths:
        data = _read_toml(path)
        _check(path, data)
        permissions = data.get("permissions", {})
        for key in rules:
            rules[key] += _strings(path, f"permissions.{key}", permissions.get(key, []))
        if "mode" in permissions:
            merged["mode"] = _mode(path, permissions["mode"])
        if "model" in data:
            if not isinstance(data["model"], str):
                raise ChatConfigError(f"{path}: `model` must be a string like 'openai:gpt-4o'")
            merged["model"] = data["model"]
        for key in ("skills", "plugins"):
            if key in data:
                merged[key] = _strings(path, key, data[key])
        merged["context"] = {
            **merged.get("context", {}),
            **_table(path, "context", data.get("context", {})),
        }
        for name, server in _table(path, "mcp_servers", data.get("mcp_servers", {})).items():
            servers[name] = _server(path, name, server)
    return ChatSettings(
        model=merged.get("model"),
        mode=merged.get("mode"),
        allow=tuple(rules["allow"]),
        ask=tuple(rules["ask"]),
        deny=tuple(rules["deny"]),
        mcp_servers=servers,
        skills=tuple(merged.get("skills", ())),
        skills_set="skills" in merged,
        plugins=tuple(merged.get("plugins", ())),
        plugins_set="plugins" in merged,
        context=merged.get("context", {}),
        files=tuple(str(p) for p in paths),
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
    allowed = (
        {"command", "args", "env", "cwd"} if "command" in value else {"url", "headers", "auth"}
    )
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
