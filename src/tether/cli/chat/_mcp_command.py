"""`/mcp`: each server's status; `/mcp login NAME` and `/mcp logout NAME` for OAuth servers."""

from __future__ import annotations

import webbrowser
from typing import TYPE_CHECKING

from tether.cli._sanitize import visible
from tether.errors import ConfigError, MCPConnectionError

if TYPE_CHECKING:
    from tether.cli.chat._slash import SlashContext

__all__ = ["mcp_command"]

_USAGE = "usage: /mcp, /mcp login NAME, /mcp logout NAME"


async def mcp_command(ctx: SlashContext, arg: str) -> bool:
    """Show the servers, or log in to / out of one."""
    verb, _, name = arg.partition(" ")
    if not verb:
        await _status(ctx)
        return False
    client = next((c for c in ctx.chat.mcps if c.name == name.strip()), None)
    if verb not in ("login", "logout") or client is None:
        known = ", ".join(c.name for c in ctx.chat.mcps) or "none configured"
        _say(ctx, f"{_USAGE} (servers: {known})")
        return False
    if verb == "logout":
        await client.logout()
        _say(ctx, f"{client.name}: logged out (its tokens are deleted)")
        return False
    from tether.mcp import HttpMCPConfig, loopback_authorize

    config = client.mcp_config
    if not isinstance(config, HttpMCPConfig) or config.auth is None:
        _say(ctx, f"{client.name}: no OAuth configured (add `auth = {{}}` to its config)")
        return False

    async def show(url: str) -> None:
        _say(ctx, f"open this address to log in to {client.name}:\n  {url}")
        webbrowser.open(url)

    try:
        await client.login(loopback_authorize(config.auth.redirect_uri, show))
    except (MCPConnectionError, ConfigError, TimeoutError) as exc:
        _say(ctx, f"{client.name}: login failed: {exc or 'timed out'}")
        return False
    _say(ctx, f"{client.name}: logged in, {client.status}")
    return False


async def _status(ctx: SlashContext) -> None:
    if not ctx.chat.mcps:
        if not ctx.chat.options.trusted:
            _say(
                ctx,
                "no MCP servers (a project's .mcp.json and [mcp_servers] start only once you "
                "trust the folder: `tether trust`; yours go in ~/.config/tether/config.toml)",
            )
        else:
            _say(
                ctx,
                "no MCP servers (add them to .mcp.json or [mcp_servers] in .tether/config.toml)",
            )
        return
    for client in ctx.chat.mcps:
        tools = await client.list_tools(ctx.chat.agent.state)
        _say(ctx, f"{client.name}: {client.status}, {len(tools)} tools")
        for tool in tools:
            _say(ctx, f"  {tool.name}")
        if client.status == "needs login":
            _say(ctx, f"  run `/mcp login {client.name}`")


def _say(ctx: SlashContext, line: str) -> None:
    # Server names, statuses and tool names come from outside: controls are shown, not obeyed.
    ctx.console.print(visible(line), markup=False, highlight=False)


async def prompt_text(ctx: SlashContext, line: str) -> str | None:
    """`/mcp__<server>__<prompt> [value ...] [name=value ...]` filled in by the server.

    None when `line` names no server's prompt (then it is an ordinary command). Bare
    values fill the prompt's arguments in their declared order.
    """
    head, _, rest = line[1:].partition(" ")
    if not head.startswith("mcp__"):
        return None
    for client in ctx.chat.mcps:
        prefix = f"mcp__{client.name}__"
        if not head.startswith(prefix):
            continue
        name = head.removeprefix(prefix)
        try:
            prompts = {p["name"]: p for p in await client.list_prompts()}
        except Exception as exc:  # e.g. the server is down or has no prompts
            _say(ctx, f"{client.name}: cannot list prompts ({exc})")
            return ""
        if name not in prompts:
            _say(ctx, f"{client.name} has no prompt {name!r}; it has: {', '.join(prompts)}")
            return ""
        declared = [a["name"] for a in prompts[name].get("arguments", [])]
        arguments: dict[str, str] = {}
        bare = []
        for word in rest.split():
            key, eq, value = word.partition("=")
            if eq and key in declared:
                arguments[key] = value
            else:
                bare.append(word)
        free = [a for a in declared if a not in arguments]
        arguments.update(zip(free, bare, strict=False))
        try:
            messages = await client.get_prompt(name, arguments)
        except Exception as exc:
            _say(ctx, f"{client.name}: prompt {name!r} failed ({exc})")
            return ""
        texts = [
            m["content"].get("text", "") for m in messages if isinstance(m.get("content"), dict)
        ]
        return "\n\n".join(t for t in texts if t)
    return None
