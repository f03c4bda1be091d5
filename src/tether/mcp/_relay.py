"""`AnswerRelay`: answers to a server's question that come through another process.

A question waits in the process that runs the tool call (`tether.mcp._asking`); with
several service workers the user's answer may reach any of them. A relay, registered
for a reply id while that reply runs, announces each question where every worker can
see it and is polled for the answer; the service provides one over its shared storage.
"""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from typing import Any, Literal

__all__ = ["AnswerRelay", "add_relay", "drop_relay", "relay_for"]

_FIRST_PAUSE, _MAX_PAUSE = 0.05, 0.5  # seconds between two looks for a relayed answer


class AnswerRelay(ABC):
    """Carries the answers to one reply's questions between processes."""

    @abstractmethod
    async def announce(
        self, request_id: str, kind: Literal["elicitation", "sampling"], reply_id: str
    ) -> None:
        """Tell every process that a question waits under `request_id`."""

    @abstractmethod
    async def answer(self, request_id: str) -> dict[str, Any] | None:
        """The answer posted for `request_id` (as JSON), or None yet."""

    @abstractmethod
    async def forget(self, request_id: str) -> None:
        """The question is settled: remove what `announce` and the answer left."""

    async def wait(self, request_id: str, done: asyncio.Future[Any]) -> dict[str, Any] | None:
        """Look for the answer (a growing pause between looks) until one comes or `done`."""
        pause = _FIRST_PAUSE
        while not done.done():
            found = await self.answer(request_id)
            if found is not None:
                return found
            await asyncio.wait({done}, timeout=pause)
            pause = min(pause * 2, _MAX_PAUSE)
        return None


_RELAYS: dict[str, AnswerRelay] = {}


def relay_for(reply_id: str) -> AnswerRelay | None:
    """The relay registered for `reply_id`, if any."""
    return _RELAYS.get(reply_id)


def add_relay(reply_id: str, relay: AnswerRelay) -> None:
    """Relay the answers to the questions of `reply_id` through `relay`."""
    _RELAYS[reply_id] = relay


def drop_relay(reply_id: str, relay: AnswerRelay) -> None:
    """Stop relaying for `reply_id` (if `relay` is still the one registered)."""
    if _RELAYS.get(reply_id) is relay:
        del _RELAYS[reply_id]
