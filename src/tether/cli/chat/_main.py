"""`run_chat`: flags and config to a chat, then interactive or headless."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from tether._schemas import build_schemas
from tether.cli._sanitize import visible
from tether.cli.chat._agents import chat_subagents, load_definitions
from tether.cli.chat._build import (
    ChatOptions,
    apply_permissions,
    build_agent,
    build_toolkit,
    load_plugins,
    mcp_clients,
)
from tether.cli.chat._chat import Chat
from tether.cli.chat._config import Layers, load_layers, merge_settings
from tether.cli.chat._folder import Folder, instruction_files, project_root
from tether.cli.chat._instructions import load_instructions
from tether.cli.chat._model import resolve_model
from tether.cli.chat._sessions import SessionStore
from tether.cli.chat._trust_ask import settle_trust
from tether.errors import ChatConfigError, ConfigError, MissingDependencyError, StorageError
from tether.message import AssistantMsg, SystemMsg, UserMsg
from tether.state import AgentState

__all__ = ["run_chat"]


def run_chat(args: argparse.Namespace) -> int:
    """Run `tether chat`; a bad flag, config or missing key is one line and exit 2."""
    try:
        return asyncio.run(_run(args))
    except (ConfigError, StorageError, MissingDependencyError) as exc:
        print(f"tether chat: {visible(str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


def _layers(args: argparse.Namespace) -> tuple[Path, tuple[Path, ...], Layers, Folder]:
    cwd = Path.cwd().resolve()
    add_dirs = tuple(Path(d).expanduser().resolve() for d in args.add_dir)
    for extra in add_dirs:
        if not extra.is_dir():
            raise ChatConfigError(f"--add-dir {str(extra)!r} is not a folder")
    layers = load_layers(cwd, args.config)
    root = project_root(cwd)
    return cwd, add_dirs, layers, Folder(root, layers.project, tuple(instruction_files(root, cwd)))


async def _options(args: argparse.Namespace, headless: bool) -> ChatOptions:
    cwd, add_dirs, layers, folder = _layers(args)
    decision = await settle_trust(folder, args.trust_folder, None if headless else _ask)
    return ChatOptions(
        cwd=cwd,
        add_dirs=add_dirs,
        settings=merge_settings(layers.user, decision.project),
        mode=args.permission_mode,
        allow=tuple(args.allow),
        deny=tuple(args.deny),
        max_iters=args.max_iters,
        headless=headless,
        root=folder.root,
        instructions=decision.instructions,
        trusted=decision.level != "none",
        trusted_agents=decision.level != "none" and decision.agents,
    )


def _need_prompt_toolkit() -> None:
    """The terminal chat reads keys through prompt-toolkit (the `cli` extra): say so first."""
    try:
        import prompt_toolkit  # noqa: F401  # loaded now so a missing extra is one line
    except ModuleNotFoundError:
        raise MissingDependencyError(
            "prompt_toolkit", "cli", "the interactive `tether chat`"
        ) from None


async def _ask(message: str, default: str) -> str:
    """One answer from the keyboard (prompt-toolkit loads only when a question is asked)."""
    from tether.cli.chat._input import LineInput

    return await LineInput(None).answer(message, default)


def _prompt(args: argparse.Namespace, headless: bool) -> str | None:
    if args.prompt or not headless:
        return str(args.prompt) if args.prompt else None
    text = sys.stdin.read() if not sys.stdin.isatty() else ""
    if not text.strip():
        raise ChatConfigError('no prompt: pass one (`tether chat -p "..."`) or pipe it on stdin')
    return text


async def _state(args: argparse.Namespace, store: SessionStore) -> AgentState | None:
    if args.resume:
        return await store.load(args.resume)
    if args.continue_:
        return await store.latest()
    return None


async def _run(args: argparse.Namespace) -> int:
    build_schemas(UserMsg, AssistantMsg, SystemMsg, AgentState)  # each once, innermost first
    headless = bool(args.headless) or not sys.stdin.isatty()
    if not headless:
        _need_prompt_toolkit()
    options = await _options(args, headless)
    prompt = _prompt(args, headless)
    model, spec = resolve_model(args.model, options.settings.model)
    store = SessionStore.open(options.cwd, spec)
    try:
        loaded = await _state(args, store)
    except BaseException:
        await store.close()
        raise
    state = loaded if loaded is not None else AgentState()
    apply_permissions(state, options, fresh=loaded is None)
    mcps = mcp_clients(options.settings, options.cwd)
    plugins = load_plugins(options.settings)
    toolkit = build_toolkit(options, mcps, plugins)
    definitions = load_definitions(options.root, trusted=options.trusted_agents)
    for subagent in chat_subagents(definitions, model, options.cwd, options.add_dirs):
        toolkit.register(subagent)
    instructions = load_instructions(options.instructions, options.root)
    agent = build_agent(options, model, toolkit, state, instructions)
    chat = Chat(agent, store, options, spec, mcps, [p.module_name for p in plugins])
    chat.instructions = instructions
    try:
        if headless:
            from tether.cli.chat._headless import run_headless

            return await run_headless(chat, prompt or "", args.output_format)
        from tether.cli.chat._interactive import run_interactive

        return await run_interactive(chat, prompt)
    finally:
        await chat.close()
