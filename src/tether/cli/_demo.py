"""The offline demo: a scripted model drives an agent with tools; the terminal shows events.

It shows the loop (concurrent read-only tools), a permission pause confirmed by the
"user" with a remembered rule, and the session saved to SQLite and resumed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path
from typing import Any

from tether.agent import Agent
from tether.event import ConfirmResult, RequireUserConfirmEvent, UserConfirmResultEvent
from tether.message import AssistantMsg, TextBlock, ThinkingBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

__all__ = ["register", "run_demo"]

call = ScriptedChatModel.tool_call


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `tether demo` to the command line."""
    demo = sub.add_parser("demo", help="run a scripted agent offline and show its events")
    demo.add_argument(
        "--db", default=None, help="SQLite file for the session (default: a temp file)"
    )
    demo.add_argument(
        "--workdir", default=None, help="folder the demo's file tools work in (default: a temp dir)"
    )
    demo.set_defaults(handler=_run)


def _run(args: argparse.Namespace) -> int:
    return asyncio.run(run_demo(db=args.db, workdir=args.workdir))


def _toolkit(workdir: Path) -> Toolkit:
    @tool(is_read_only=True, is_concurrency_safe=True)
    def word_count(text: str) -> int:
        """Count the words of a text."""
        return len(text.split())

    @tool(is_read_only=True, is_concurrency_safe=True)
    def list_notes() -> list[str]:
        """List the saved notes."""
        return sorted(p.name for p in workdir.glob("*.md"))

    @tool(requires_confirmation=True)
    def save_note(name: str, text: str) -> str:
        """Save a note as a markdown file (asks before writing)."""
        (workdir / f"{name}.md").write_text(text)
        return f"saved {name}.md ({len(text)} characters)"

    return Toolkit(tools=[word_count, list_notes, save_note])


def _script() -> list[AssistantMsg]:
    """The model's turns (built when the demo runs: `tether chat` starts without them)."""
    return [
        AssistantMsg(
            "assistant",
            [
                ThinkingBlock(thinking="Count the words and look at existing notes, both at once."),
                call("word_count", {"text": "tether keeps agents honest"}),
                call("list_notes"),
            ],
        ),
        AssistantMsg(
            "assistant",
            [
                TextBlock(text="Four words and no notes yet. Saving it."),
                call("save_note", {"name": "motto", "text": "tether keeps agents honest"}),
            ],
        ),
        AssistantMsg("assistant", "Saved `motto.md`."),
        AssistantMsg("assistant", [call("save_note", {"name": "second", "text": "rules persist"})]),
        AssistantMsg(
            "assistant", "Saved `second.md` without asking: you allowed `save_note` earlier."
        ),
    ]


async def _storage(path: str) -> Any:
    try:
        from tether.app.storage import SQLiteStorage
    except ImportError:  # pragma: no cover  # storage is part of the package
        return None
    return SQLiteStorage(path)


def _prepare(workdir: str) -> Path:
    folder = Path(workdir)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _note_names(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob("*.md"))


async def run_demo(db: str | None = None, workdir: str | None = None) -> int:
    """Run the demo; returns the exit status.

    Without `db` or `workdir`, they live in a temporary folder removed at the end.
    """
    with tempfile.TemporaryDirectory(prefix="tether-demo-") as scratch:
        kept = "" if db and workdir else f" (in {scratch}, removed now)"
        return await _tour(
            db or str(Path(scratch) / "sessions.db"), workdir or str(Path(scratch) / "notes"), kept
        )


async def _tour(db: str, workdir: str, kept: str) -> int:  # one story, told in order
    from rich.console import Console

    from tether.cli._render import EventRenderer

    console = Console()
    render = EventRenderer(console)
    folder = _prepare(workdir)
    model = ScriptedChatModel(_script(), name="scripted-demo")
    toolkit = _toolkit(folder)

    def agent_for(state: AgentState) -> Agent:
        return Agent(
            name="notes",
            system_prompt="You keep the user's notes.",
            model=model,
            toolkit=toolkit,
            state=state,
        )

    storage = await _storage(db)
    if storage is not None:
        async with storage:  # an unusable path fails here, before the demo starts
            pass
    ids = ("demo-user", "notes-agent", "session-1")
    console.rule("1. a reply that pauses for confirmation")
    agent = agent_for(AgentState())
    pause: RequireUserConfirmEvent | None = None
    async for event in agent.reply_stream(
        UserMsg("user", "Save the motto 'tether keeps agents honest'.")
    ):
        render(event)
        if isinstance(event, RequireUserConfirmEvent):
            pause = event
    assert pause is not None
    if storage is not None:
        async with storage:
            await storage.upsert_session(*ids, state=agent.state)
        console.print(f"[dim]paused state saved to SQLite ({storage.path})[/]")
        async with storage:
            record = await storage.get_session(*ids)
            assert record is not None
            agent = agent_for(record.state)
        console.print("[dim]reloaded into a fresh agent[/]")

    console.rule("2. the user confirms and accepts the suggested rule")
    answer = UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[
            ConfirmResult(confirmed=True, tool_call=tc, rules=tc.suggested_rules)
            for tc in pause.tool_calls
        ],
    )
    async for event in agent.reply_stream(answer):
        render(event)

    console.rule("3. the remembered rule allows the next call without asking")
    async for event in agent.reply_stream(UserMsg("user", "Also save 'rules persist'.")):
        render(event)
    if storage is not None:
        async with storage:
            await storage.update_session_state(*ids, state=agent.state)
    model.assert_complete()
    notes = _note_names(folder)
    console.rule("done")
    console.print(f"notes in {folder}: {notes}{kept}")
    console.print(
        f"remembered rules: {[str(r) for r in agent.state.permission_context.allow_rules]}"
    )
    console.print(
        f"state: {len(json.loads(agent.state.model_dump_json())['context'])} messages, "
        f"{agent.state.estimated_tokens} tokens (estimated)"
    )
    return 0
