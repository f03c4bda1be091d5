"""The interactive chat: read a line, stream the reply, ask at pauses, repeat.

Ctrl+C while a reply runs stops it (the stream is closed, so the library settles the
state, which is then saved); Ctrl+C twice at the prompt, Ctrl+D or `/exit` leave.
"""

from __future__ import annotations

import asyncio
import signal
from contextlib import suppress

from rich.console import Console
from rich.text import Text

from tether.cli._sanitize import visible
from tether.cli.chat._chat import Chat, Inputs, is_asking
from tether.cli.chat._confirm import ask_confirmation
from tether.cli.chat._input import LineInput
from tether.cli.chat._mcp_attach import attach_resources
from tether.cli.chat._mcp_command import prompt_text
from tether.cli.chat._mcp_questions import ServerQuestions, answer_by_terminal
from tether.cli.chat._menu import choose
from tether.cli.chat._render import ChatRenderer, safe
from tether.cli.chat._sessions import tether_home
from tether.cli.chat._slash import SlashContext, run_slash
from tether.cli.chat._typeahead import TypeAhead
from tether.cli.chat._views import model_label, status_line
from tether.event import AgentEvent, RequireUserConfirmEvent
from tether.message import ToolCallBlock, UserMsg

__all__ = ["run_interactive"]


class _Screen:
    """The keyboard, the console, the renderer, and the chat they drive."""

    def __init__(self, chat: Chat) -> None:
        self.chat = chat
        self.console = Console(highlight=False)
        self.render = ChatRenderer(self.console, chat.options.cwd)
        from tether.cli.chat._completion import PromptCompleter  # loads prompt-toolkit

        self.keys = LineInput(tether_home() / "history", PromptCompleter(lambda: chat.mcps))
        self.slash = SlashContext(chat, self.console, self.keys.answer, self.switch)
        self.questions = ServerQuestions(self.ask_during_reply, self.say)
        self.ahead = TypeAhead(self.show_queued, self.render.typing)

    async def ask_during_reply(self, question: str, default: str) -> str:
        """A server's question: the terminal is the question's while it is asked."""
        with self.ahead.paused():
            return await self.keys.answer(question, default)

    def say(self, line: str) -> None:
        """A plain line of its own (an MCP server's question)."""
        self.render.close()
        self.console.print(Text(line))

    def on_event(self, event: AgentEvent) -> None:
        """Show the event; a server's question is asked while the call waits."""
        self.render(event)
        self.questions.see(event)

    def show_queued(self, line: str) -> None:
        """A line typed during a reply: shown at once, sent when the reply ends."""
        self.render.queued(f"[dim]⧗ queued: {safe(line)} (sent when this reply ends)[/]")

    async def next_line(self) -> str:
        """The next queued line (echoed as if typed), else one read from the input line."""
        if self.ahead.queued:
            line = self.ahead.queued.pop(0)
            self.console.print(Text(f"> {visible(line)}"))
            return line
        return await self.keys.message("> ", self.ahead.take_pending())

    async def switch(self, session_id: str) -> None:
        """Load another saved session; if it waits for a confirmation, ask now."""
        self.chat.agent.state = await self.chat.store.load(session_id)
        self.console.print(f"resumed session {safe(session_id)}")
        self.show_history()
        if is_asking(self.chat.agent.state):
            await self.turn(None)

    def announce(self, call: ToolCallBlock) -> None:
        """The question's header: reverse video with the call's id (no output can draw it)."""
        self.render.close()
        self.console.print(
            Text(f" ? tether asks · permission for call {visible(call.id)} ", style="bold reverse")
        )

    def show_history(self) -> None:
        """The last few messages of a resumed session."""
        for msg in self.chat.agent.state.context[-6:]:
            text = " ".join((msg.get_text_content(" ") or "").split())
            if text:
                who = "you" if msg.role == "user" else "tether"
                self.console.print(f"[dim]{who}:[/] {safe(text[:200])}")

    async def turn(self, inputs: Inputs) -> bool:
        """Run a reply through its pauses; True if Ctrl+C stopped it."""
        reasons: list[str] = []
        while True:
            stopped, pause = await self._stream(inputs)
            if stopped:
                return True
            if pause is not None:
                answers = await ask_confirmation(pause, self.keys.answer, self.announce, choose)
                reasons += answers.reasons
                inputs = answers.event
            elif reasons:
                inputs, reasons = UserMsg("user", "\n".join(reasons)), []
            else:
                return False

    async def _stream(self, inputs: Inputs) -> tuple[bool, RequireUserConfirmEvent | None]:
        """One stream: whether Ctrl+C stopped it, and its pause (None at the end)."""
        loop = asyncio.get_running_loop()
        task = asyncio.create_task(self.chat.stream(inputs, self.on_event))
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            with self.ahead.reading():
                await asyncio.wait([task])
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            self.questions.stop()
            self.render.close()
        if task.cancelled():
            self.render.note("[yellow]⏹ interrupted: the reply was stopped and saved[/]")
            return True, None
        error = task.exception()
        if error is not None:
            if not isinstance(error, Exception):
                raise error
            self.render.note(f"[red]error: {type(error).__name__}: {safe(error)}[/]")
            return False, None
        return False, task.result()


async def run_interactive(chat: Chat, first: str | None) -> int:
    """The read-reply loop; returns the exit status."""
    screen = _Screen(chat)
    answer_by_terminal(chat.mcps, chat.agent.model)
    console = screen.console
    state = chat.agent.state
    console.print(
        f"[bold]tether chat[/] · session {state.session_id} · {safe(model_label(chat.model_spec))} · "
        "/help for commands"
    )
    if state.context:
        screen.show_history()
    interrupted = False
    if is_asking(state):
        interrupted = await screen.turn(None)  # the pause is announced again: ask
    elif first:
        interrupted = await screen.turn(UserMsg("user", first))
    while True:
        console.print(f"[dim]{safe(status_line(chat))}[/]")
        try:
            line = await screen.next_line()
        except KeyboardInterrupt:
            if interrupted:
                break
            interrupted = True
            console.print("[dim](Ctrl+C again, Ctrl+D or /exit to leave)[/]")
            continue
        except EOFError:
            break
        interrupted = False
        if not line.strip():
            continue
        text = await prompt_text(screen.slash, line) if line.startswith("/mcp__") else None
        if text is not None:  # a server's prompt as a command ("" if it failed)
            if text:
                interrupted = await screen.turn(UserMsg("user", text))
            continue
        if line.startswith("/"):
            with suppress(KeyboardInterrupt):
                if await run_slash(screen.slash, line):
                    break
            continue
        if "@" in line and chat.mcps:
            line = await attach_resources(chat.mcps, line, screen.say)
        interrupted = await screen.turn(UserMsg("user", line))
    console.print(
        f"[dim]session {chat.agent.state.session_id} saved; `tether chat -c` continues it[/]"
    )
    return 0
