"""An MCP server's questions in the terminal: an elicitation as a form, sampling as a yes/no.

The question arrives as an event while the tool call waits; it is asked in a task of its
own (the reply's stream stays open) and the answer goes back with `answer_elicitation` /
`answer_sampling`. Ctrl+C in a question cancels it (the server hears `cancel`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from tether.cli._sanitize import visible
from tether.cli.chat._confirm import Ask
from tether.event import AgentEvent

if TYPE_CHECKING:
    from tether.mcp import ElicitationRequestEvent, ElicitationResponse, MCPClient
    from tether.model import ChatModelBase

__all__ = ["ServerQuestions", "answer_by_terminal", "ask_form"]

Say = Callable[[str], None]
"""Prints one line (already made safe for the terminal)."""


def answer_by_terminal(mcps: Sequence[MCPClient], model: ChatModelBase) -> None:
    """Let the servers ask the user (elicitation) and the model, once the user said yes."""
    from tether.mcp import ModelSampler, ask_caller, confirm_with_caller

    for client in mcps:
        client.on_elicitation = ask_caller
        client.on_sampling = ModelSampler(model, confirm_with_caller)


class ServerQuestions:
    """Asks each server question seen in the stream, one at a time."""

    def __init__(self, ask: Ask, say: Say) -> None:
        self.ask = ask
        self.say = say
        self._tasks: set[asyncio.Task[None]] = set()
        self._turn = asyncio.Lock()

    def see(self, event: AgentEvent) -> None:
        """Start asking if `event` is a server's question."""
        from tether.mcp import ElicitationRequestEvent, SamplingRequestEvent

        elicitation = ElicitationRequestEvent.of(event)
        sampling = SamplingRequestEvent.of(event) if elicitation is None else None
        if elicitation is None and sampling is None:
            return
        task = asyncio.create_task(self._answer(elicitation, sampling))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def stop(self) -> None:
        """Stop asking (the reply ended or was interrupted; its questions are settled)."""
        for task in list(self._tasks):
            task.cancel()

    async def _answer(self, elicitation: Any, sampling: Any) -> None:
        from tether.mcp import (
            ElicitationResponse,
            answer_elicitation,
            answer_sampling,
        )

        async with self._turn:
            if elicitation is not None:
                try:
                    answer = await ask_form(elicitation, self.ask, self.say)
                except (KeyboardInterrupt, EOFError):
                    answer = ElicitationResponse("cancel")
                answer_elicitation(elicitation.request_id, answer)
                return
            data = sampling.data
            self.say(f"? MCP server {visible(data['server'])} wants the model to answer:")
            for line in str(data.get("text", "")).splitlines()[:20]:
                self.say(f"  {visible(line)}")
            try:
                reply = await self.ask("Let the model answer? [y]es / [n]o ", "")
            except (KeyboardInterrupt, EOFError):
                reply = "n"
            answer_sampling(sampling.request_id, reply.strip().lower() in ("y", "yes"))


async def ask_form(event: ElicitationRequestEvent, ask: Ask, say: Say) -> ElicitationResponse:
    """The user's answer to an elicitation: the form's fields, or decline / cancel."""
    from tether.mcp import ElicitationResponse

    data = event.data
    say(f"? MCP server {visible(data['server'])} asks: {visible(data['message'])}")
    if data.get("mode") == "url":
        say(f"  open: {visible(data.get('url') or '')}")
        choice = await _choice(ask, "Done? [y]es / [n]o, decline / [c]ancel ")
        return ElicitationResponse(choice)
    choice = await _choice(ask, "Answer? [y]es / [n]o, decline / [c]ancel ")
    if choice != "accept":
        return ElicitationResponse(choice)
    schema = event.requested_schema or {}
    required = set(schema.get("required") or ())
    content: dict[str, Any] = {}
    for name, spec in (schema.get("properties") or {}).items():
        if isinstance(spec, dict):
            value = await _field(ask, say, str(name), spec, name in required)
            if value is not None:
                content[name] = value
    return ElicitationResponse("accept", content)


async def _choice(ask: Ask, question: str) -> Any:
    while True:
        reply = (await ask(question, "")).strip().lower()
        for word, action in (("y", "accept"), ("n", "decline"), ("c", "cancel")):
            if reply in (word, {"y": "yes", "n": "no", "c": "cancel"}[word]):
                return action


def _choices(spec: dict[str, Any]) -> list[str]:
    if isinstance(spec.get("enum"), list):
        return [str(v) for v in spec["enum"]]
    options = spec.get("oneOf") or spec.get("anyOf")
    if isinstance(options, list):
        return [str(o["const"]) for o in options if isinstance(o, dict) and "const" in o]
    items = spec.get("items")
    return _choices(items) if isinstance(items, dict) else []


async def _field(ask: Ask, say: Say, name: str, spec: dict[str, Any], required: bool) -> Any:
    """One field's value (None: left out), asked until it parses."""
    kind = spec.get("type", "string")
    label = visible(str(spec.get("title") or name))
    hint = visible(str(spec.get("description") or ""))
    choices = _choices(spec)
    if choices:
        hint = f"{hint} (one of: {', '.join(visible(c) for c in choices)})".strip()
    if kind == "boolean":
        hint = f"{hint} [y/n]".strip()
    default = spec.get("default")
    shown = "" if default is None else _text(default)
    while True:
        text = (await ask(f"  {label}{'*' if required else ''}: {hint} ", shown)).strip()
        if not text:
            if required and default is None:
                say(f"  {label} is required")
                continue
            return None
        value, problem = _parse(text, kind, choices)
        if problem is None:
            return value
        say(f"  {label}: {problem}")


def _text(value: Any) -> str:
    if isinstance(value, bool):
        return "y" if value else "n"
    if isinstance(value, list):
        return ", ".join(str(v) for v in value)
    return str(value)


def _parse(text: str, kind: str, choices: list[str]) -> tuple[Any, str | None]:
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true"):
            return True, None
        if text.lower() in ("n", "no", "false"):
            return False, None
        return None, "answer y or n"
    if kind in ("number", "integer"):
        try:
            return (int(text) if kind == "integer" else float(text)), None
        except ValueError:
            return None, f"not an {kind}" if kind == "integer" else "not a number"
    if kind == "array":
        values = [v.strip() for v in text.split(",") if v.strip()]
        wrong = [v for v in values if choices and v not in choices]
        return (None, f"not a choice: {', '.join(wrong)}") if wrong else (values, None)
    if choices and text not in choices:
        return None, "pick one of the choices"
    return text, None
