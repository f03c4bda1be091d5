"""Slash commands: `/help`, `/clear`, `/compact`, `/context`, `/permissions`, ..."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from rich.console import Console

from tether.cli._sanitize import visible
from tether.cli.chat._chat import Chat
from tether.cli.chat._instructions import (
    STARTER,
    USER_LABEL,
    instructions_prompt,
    load_instructions,
)
from tether.cli.chat._mcp_command import mcp_command
from tether.cli.chat._model import resolve_model
from tether.cli.chat._permissions import permissions_command
from tether.cli.chat._views import context_lines, cost_lines, plugin_lines
from tether.errors import ConfigError
from tether.event import ContextCompressedEvent

__all__ = ["COMMANDS", "SlashContext", "run_slash"]


@dataclass
class SlashContext:
    """What a command may use: the chat, the screen, and a way to ask a question."""

    chat: Chat
    console: Console
    ask: Callable[[str, str], Awaitable[str]]
    resume: Callable[[str], Awaitable[None]]
    """Switch to a saved session by id (resuming its pause, if any)."""


Handler = Callable[[SlashContext, str], Awaitable[bool]]
"""Runs a command with its argument text; True means exit."""


async def _help(ctx: SlashContext, arg: str) -> bool:
    for name, (text, _) in COMMANDS.items():
        ctx.console.print(f"  [bold]/{name}[/] — {text}", highlight=False)
    ctx.console.print("  [dim]Esc Enter: new line · Ctrl+C: stop the reply · Ctrl+D: exit[/]")
    return False


async def _clear(ctx: SlashContext, arg: str) -> bool:
    ctx.chat.agent.state = ctx.chat.fresh_state()
    ctx.chat.store.title = ""
    ctx.console.print(f"new session {ctx.chat.agent.state.session_id}", highlight=False)
    return False


async def _compact(ctx: SlashContext, arg: str) -> bool:
    before = ctx.chat.agent.state.estimated_tokens
    event = await ctx.chat.agent.compress_context()
    if not isinstance(event, ContextCompressedEvent):
        ctx.console.print(f"nothing to compact ({before} tokens)", highlight=False)
        return False
    ctx.console.print(
        f"compacted: {event.before_tokens} → {event.after_tokens} tokens "
        f"({event.compressed_messages} messages summarised)",
        highlight=False,
    )
    await ctx.chat.save()
    return False


async def _print_lines(ctx: SlashContext, lines: list[str]) -> bool:
    for line in lines:
        ctx.console.print(visible(line), markup=False, highlight=False)
    return False


async def _context(ctx: SlashContext, arg: str) -> bool:
    return await _print_lines(ctx, await context_lines(ctx.chat))


async def _permissions(ctx: SlashContext, arg: str) -> bool:
    lines = permissions_command(ctx.chat.agent.state.permission_context, arg)
    await ctx.chat.save()
    return await _print_lines(ctx, lines)


async def _plugins(ctx: SlashContext, arg: str) -> bool:
    return await _print_lines(ctx, plugin_lines(ctx.chat))


async def _model(ctx: SlashContext, arg: str) -> bool:
    if not arg:
        ctx.console.print(f"model: {visible(ctx.chat.model_spec)}", markup=False, highlight=False)
        return False
    try:
        ctx.chat.agent.model, _ = resolve_model(arg, None)
    except ConfigError as exc:
        ctx.console.print(visible(str(exc)), style="red", markup=False, highlight=False)
        return False
    ctx.chat.model_spec = ctx.chat.store.model = arg
    ctx.console.print(f"model: {visible(arg)}", markup=False, highlight=False)
    return False


async def _cost(ctx: SlashContext, arg: str) -> bool:
    return await _print_lines(ctx, cost_lines(ctx.chat))


async def _resume(ctx: SlashContext, arg: str) -> bool:
    infos = await ctx.chat.store.sessions()
    if not infos:
        ctx.console.print("no saved sessions in this folder")
        return False
    if not arg:
        for n, info in enumerate(infos[:20], 1):
            title = info.metadata.get("title") or "(empty)"
            when = info.updated_at.strftime("%Y-%m-%d %H:%M")
            ctx.console.print(
                visible(f"  {n:>2}. {info.session_id}  {when}  {info.message_count} msgs  {title}"),
                markup=False,
                highlight=False,
            )
        arg = (await ctx.ask("Resume which (number or id, Enter to cancel)? ", "")).strip()
        if not arg:
            return False
    chosen = infos[int(arg) - 1].session_id if arg.isdigit() and 0 < int(arg) <= len(infos) else arg
    await ctx.resume(chosen)
    return False


async def _init(ctx: SlashContext, arg: str) -> bool:
    from tether.cli.chat._folder import NAMES

    options = ctx.chat.options
    root = options.root or options.cwd
    existing = [root / n for n in NAMES if (root / n).is_file()]
    if existing:
        ctx.console.print(
            f"{visible(str(existing[0]))} exists already; edit it", markup=False, highlight=False
        )
        return False
    target = root / "AGENTS.md"
    target.write_text(STARTER, encoding="utf-8")
    lines = [f"wrote {visible(str(target))}: a starter to fill in (commands, conventions)"]
    if options.trusted:
        found = [i for i in load_instructions((target,), root) if i.label != USER_LABEL]
        header = not ctx.chat.instructions
        ctx.chat.instructions += found
        ctx.chat.agent.system_prompt += instructions_prompt(found, header=header)
        lines.append("it is in the system prompt from now on (/context shows its cost)")
    else:
        lines.append("this folder is not trusted: it is read once you trust it (`tether trust`)")
    return await _print_lines(ctx, lines)


async def _exit(ctx: SlashContext, arg: str) -> bool:
    return True


COMMANDS: dict[str, tuple[str, Handler]] = {
    "help": ("list the commands", _help),
    "clear": ("start a new session", _clear),
    "compact": ("compress the context now (shows tokens before and after)", _compact),
    "context": ("what fills the context window", _context),
    "permissions": (
        "list rules; `allow|ask|deny RULE`, `remove RULE`, `mode MODE`",
        _permissions,
    ),
    "plugins": ("plugins, awake or asleep, and rounds left", _plugins),
    "mcp": ("MCP servers and their status; /mcp login NAME, /mcp logout NAME", mcp_command),
    "model": ("show or switch the model: /model PROVIDER:NAME", _model),
    "cost": ("tokens used so far in this session, and their cost", _cost),
    "resume": ("pick a saved session of this folder", _resume),
    "init": ("write a starter AGENTS.md (project instructions) at the project root", _init),
    "exit": ("leave (Ctrl+D does too)", _exit),
}


async def run_slash(ctx: SlashContext, line: str) -> bool:
    """Run the command on `line` (starting with `/`); True means exit."""
    name, _, arg = line[1:].strip().partition(" ")
    entry = COMMANDS.get(name.lower())
    if entry is None:
        ctx.console.print(
            f"unknown command /{visible(name)}; /help lists them", markup=False, highlight=False
        )
        return False
    return await entry[1](ctx, arg.strip())
