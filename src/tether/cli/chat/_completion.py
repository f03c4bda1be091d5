"""Tab completion of MCP prompt commands: `/mcp__<server>__<prompt>` and its arguments.

The command name completes from the servers' prompt lists; an argument completes through
the server's `completion/complete` (the value typed so far, and the arguments already
given as context). Bare words fill the arguments in their declared order, `name=value`
names one, as `/mcp__…` runs them.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document

if TYPE_CHECKING:
    from tether.mcp import MCPClient

__all__ = ["PromptCompleter"]

logger = logging.getLogger("tether.cli")


class PromptCompleter(Completer):
    """Completes `/mcp__<server>__<prompt> [arguments]` lines; other text gets nothing.

    Args:
        clients: The chat's MCP clients (called on each completion: the list may change).
    """

    def __init__(self, clients: Callable[[], Sequence[MCPClient]]) -> None:
        self.clients = clients
        self._prompts: dict[str, list[dict[str, Any]]] = {}

    def get_completions(
        self, document: Document, complete_event: CompleteEvent
    ) -> Iterable[Completion]:
        """Nothing synchronously: the servers answer in `get_completions_async`."""
        return []

    async def get_completions_async(
        self, document: Document, complete_event: CompleteEvent
    ) -> AsyncGenerator[Completion, None]:
        """Prompt names, then the argument under the cursor, from the servers."""
        text = document.text_before_cursor
        if not text.startswith("/mcp__") or "\n" in text:
            return
        head, space, rest = text[1:].partition(" ")
        try:
            if not space:
                for name in await self._names(head):
                    yield Completion(f"/{name}", start_position=-len(text))
                return
            found = await self._argument(head, rest)
        except Exception as exc:  # a server down or without completion: no suggestions
            logger.debug("MCP completion failed: %s", exc)
            return
        if found is not None:
            typed, values = found
            for value in values:
                yield Completion(value, start_position=-len(typed))

    async def _list(self, client: MCPClient) -> list[dict[str, Any]]:
        if client.name not in self._prompts:
            self._prompts[client.name] = await client.list_prompts()
        return self._prompts[client.name]

    async def _names(self, typed: str) -> list[str]:
        names = []
        for client in self.clients():
            prefix = f"mcp__{client.name}__"
            if prefix.startswith(typed) or typed.startswith(prefix):
                names += [f"{prefix}{p['name']}" for p in await self._list(client)]
        return [n for n in names if n.startswith(typed)]

    async def _argument(self, head: str, rest: str) -> tuple[str, list[str]] | None:
        for client in self.clients():
            prefix = f"mcp__{client.name}__"
            if not head.startswith(prefix):
                continue
            prompts = {p["name"]: p for p in await self._list(client)}
            prompt = prompts.get(head.removeprefix(prefix))
            if prompt is None:
                return None
            declared = [a["name"] for a in prompt.get("arguments", [])]
            words = rest.split(" ")
            done, current = words[:-1], words[-1]
            given: dict[str, str] = {}
            bare = []
            for word in done:
                key, eq, value = word.partition("=")
                if eq and key in declared:
                    given[key] = value
                elif word:
                    bare.append(word)
            free = [a for a in declared if a not in given]
            given.update(zip(free, bare, strict=False))
            key, eq, value = current.partition("=")
            if eq and key in declared:
                name, typed = key, value
            else:
                left = [a for a in declared if a not in given]
                if not left:
                    return None
                name, typed = left[0], current
            values = await client.complete_argument(prompt["name"], name, typed, given or None)
            return typed, values
        return None
