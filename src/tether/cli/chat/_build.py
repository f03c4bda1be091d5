"""Building the chat agent: tools, MCP servers, skills, plugins, permissions."""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether.agent import Agent, ContextConfig, ReActConfig
from tether.cli.chat._config import ChatSettings
from tether.cli.chat._instructions import Instruction, instructions_prompt
from tether.cli.chat._prompt import environment_prompt
from tether.errors import ChatConfigError
from tether.model import ChatModelBase
from tether.permission import PermissionBehavior, PermissionMode, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit

if TYPE_CHECKING:
    from tether.mcp import MCPClient

__all__ = [
    "ChatOptions",
    "apply_permissions",
    "build_agent",
    "build_toolkit",
    "load_plugins",
    "mcp_clients",
]

_TRANSPORTS = {"sse": "sse", "http": "streamable_http", "streamable-http": "streamable_http"}
"""`.mcp.json` `type` values for URL servers, as `HttpMCPConfig.transport`."""
_OURS = ("config", "flag")
"""Sources of the rules this command sets at start-up (replaced on every start)."""


@dataclass(frozen=True, slots=True)
class ChatOptions:
    """Everything the agent is built from: settings with the flags applied."""

    cwd: Path
    add_dirs: tuple[Path, ...]
    settings: ChatSettings
    mode: str | None
    allow: tuple[str, ...]
    deny: tuple[str, ...]
    max_iters: int | None
    headless: bool
    root: Path | None = None
    """The project root (nearest ancestor with `.git`, else `cwd`)."""
    instructions: tuple[Path, ...] = ()
    """The folder's `AGENTS.md` files to read (empty unless the folder is trusted)."""
    trusted: bool = False
    """Whether the user trusts the project folder."""
    trusted_agents: bool = False
    """Whether the folder's sub-agent definitions are the ones the user trusted."""


def mcp_clients(settings: ChatSettings, cwd: Path) -> list[MCPClient]:
    """One `MCPClient` per configured server (the `mcp` SDK loads only if there are any)."""
    if not settings.mcp_servers:
        return []
    from tether.mcp import FileTokenStore, HttpMCPConfig, MCPClient, StdioMCPConfig

    tokens = FileTokenStore()  # OAuth tokens: $TETHER_HOME/mcp-tokens, 0600
    clients: list[MCPClient] = []
    for name, spec in settings.mcp_servers.items():
        fields = {k: v for k, v in spec.items() if k not in ("type", "trust_annotations")}
        trusted = spec.get("trust_annotations", False)
        if not isinstance(trusted, bool):
            raise ChatConfigError(f"MCP server {name!r}: `trust_annotations` must be true or false")
        if "url" in fields and spec.get("type") in _TRANSPORTS:  # `.mcp.json` names it so
            fields["transport"] = _TRANSPORTS[spec["type"]]
        try:
            config: Any = (
                StdioMCPConfig(**{"cwd": str(cwd), **fields})
                if "command" in fields
                else HttpMCPConfig(**fields)
            )
            clients.append(
                MCPClient(
                    name,
                    True,
                    config,
                    is_optional=True,
                    trust_annotations=trusted,
                    token_store=tokens,
                    roots=[cwd],  # the folder the chat works in
                )
            )
        except ValueError as exc:
            raise ChatConfigError(f"MCP server {name!r}: {exc}") from None
    return clients


def load_plugins(settings: ChatSettings) -> list[Any]:
    """The configured plugins (`module:attribute`, a `Plugin` or a callable making one)."""
    return [_plugin(p) for p in settings.plugins]


def _plugin(spec: str) -> Any:
    from tether.plugin import Plugin  # only when plugins are configured

    module, _, attribute = spec.partition(":")
    try:
        value = getattr(importlib.import_module(module), attribute or "plugin")
    except (ImportError, AttributeError) as exc:
        raise ChatConfigError(
            f"plugin {spec!r} cannot be loaded ({exc}); write 'package.module:attribute' "
            "(a module in the project folder is found only if the folder is on PYTHONPATH)"
        ) from None
    if not isinstance(value, Plugin) and callable(value):
        value = value()
    if not isinstance(value, Plugin):
        raise ChatConfigError(f"plugin {spec!r} is not a `tether.plugin.Plugin` (nor makes one)")
    return value


def build_toolkit(
    options: ChatOptions, mcps: Sequence[MCPClient], plugins: Sequence[Any]
) -> Toolkit:
    """The built-in coding tools plus the configured MCP servers, skills and plugins."""
    from tether.tool.builtin import Bash, Edit, Glob, Grep, Read, Write

    base = options.cwd
    skills = [str((base / Path(s).expanduser()).resolve()) for s in options.settings.skills]
    return Toolkit(
        tools=[Bash(), Read(), Write(), Edit(), Grep(), Glob()],
        mcps=list(mcps),
        skills_or_loaders=skills,
        plugins=list(plugins),
    )


def _rules(texts: Sequence[str], source: str, behavior: str) -> list[PermissionRule]:
    kind = PermissionBehavior(behavior)
    try:
        return [PermissionRule.parse(t, behavior=kind, source=source) for t in texts]
    except ValueError as exc:
        raise ChatConfigError(f"bad permission rule: {exc}") from None


def apply_permissions(state: AgentState, options: ChatOptions, *, fresh: bool) -> None:
    """Set the mode, work dirs and start-up rules; rules the user accepted stay."""
    context = state.permission_context
    settings = options.settings
    mode = options.mode or (settings.mode if fresh else None)
    if mode is not None:
        context.mode = PermissionMode(mode)
    context.working_directories = [str(options.cwd), *(str(d) for d in options.add_dirs)]
    for name, behavior, configured, flagged in (
        ("allow_rules", "allow", settings.allow, options.allow),
        ("ask_rules", "ask", settings.ask, ()),
        ("deny_rules", "deny", settings.deny, options.deny),
    ):
        kept = [r for r in getattr(context, name) if r.source not in _OURS]
        added = _rules(configured, "config", behavior) + _rules(flagged, "flag", behavior)
        setattr(context, name, kept + added)


def build_agent(
    options: ChatOptions,
    model: ChatModelBase,
    toolkit: Toolkit,
    state: AgentState,
    instructions: Sequence[Instruction] = (),
) -> Agent:
    """The chat agent over `state` (a rejection ends the reply when a person is asked)."""
    react = ReActConfig(
        max_iters=options.max_iters or 20,
        on_rejection="continue" if options.headless else "end_reply",
    )
    try:
        context = ContextConfig(**options.settings.context)
    except ValueError as exc:  # pydantic names the field
        raise ChatConfigError(f"bad [context] settings: {exc}") from None
    return Agent(
        name="tether",
        system_prompt=environment_prompt(options.cwd, options.add_dirs)
        + instructions_prompt(list(instructions)),
        model=model,
        toolkit=toolkit,
        state=state,
        react_config=react,
        context_config=context,
    )
