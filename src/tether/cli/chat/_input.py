"""Keyboard input with prompt-toolkit: history, multi-line (Esc Enter), pre-filled edits."""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["LineInput"]


class LineInput:
    """Reads lines; `KeyboardInterrupt` on Ctrl+C, `EOFError` on Ctrl+D.

    `completer` (a prompt-toolkit `Completer`) completes the messages on Tab.
    """

    def __init__(self, history: Path | None, completer: Any = None) -> None:
        from prompt_toolkit import PromptSession
        from prompt_toolkit.history import FileHistory, InMemoryHistory
        from prompt_toolkit.key_binding import KeyBindings

        keys = KeyBindings()

        @keys.add("escape", "enter")
        def _newline(event: Any) -> None:
            event.current_buffer.insert_text("\n")

        self._message: PromptSession[str] = PromptSession(
            history=FileHistory(str(history)) if history is not None else InMemoryHistory(),
            key_bindings=keys,
            completer=completer,
        )
        self._answer: PromptSession[str] = PromptSession(history=InMemoryHistory())

    async def message(self, prompt: str, default: str = "") -> str:
        """The user's next message (kept in the history), optionally begun already."""
        return await self._message.prompt_async(prompt, default=default)

    async def answer(self, prompt: str, default: str = "") -> str:
        """A short answer (not kept in the history), optionally pre-filled for editing."""
        return await self._answer.prompt_async(prompt, default=default)
