"""Collecting the events of a stream, and a middleware that records what it saw."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from tether.event import AgentEvent
from tether.middleware import (
    ActingCall,
    MiddlewareBase,
    ModelCall,
    ReasoningCall,
    ReplyCall,
)

__all__ = ["RecordingMiddleware", "collect", "event_types"]


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    """Drain an event stream (`agent.reply_stream(...)`) into a list."""
    return [event async for event in stream]


def event_types(events: list[AgentEvent]) -> list[str]:
    """The `type` of each event, as plain strings (for asserting a sequence)."""
    return [str(e.type) for e in events]


@dataclass
class RecordingMiddleware(MiddlewareBase):
    """Records the hooks it saw, in order, and every event of each reply.

    `hooks` holds `(hook name, call record)` pairs; `events` every event `on_reply`
    passed on. It changes nothing.
    """

    hooks: list[tuple[str, ReplyCall | ReasoningCall | ModelCall | ActingCall]] = field(
        default_factory=list
    )
    """`(hook name, call record)` pairs, in the order the hooks ran."""
    events: list[AgentEvent] = field(default_factory=list)
    """Every event `on_reply` passed on."""

    async def on_reply(
        self, call: ReplyCall, call_next: Callable[[ReplyCall], AsyncIterator[AgentEvent]]
    ) -> AsyncIterator[AgentEvent]:
        """Record the reply and its events."""
        self.hooks.append(("on_reply", call))
        async for event in call_next(call):
            self.events.append(event)
            yield event

    async def on_reasoning(
        self,
        call: ReasoningCall,
        call_next: Callable[[ReasoningCall], AsyncIterator[AgentEvent]],
    ) -> AsyncIterator[AgentEvent]:
        """Record the reasoning step."""
        self.hooks.append(("on_reasoning", call))
        async for event in call_next(call):
            yield event

    async def on_model_call(
        self, call: ModelCall, call_next: Callable[[ModelCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Record the model call."""
        self.hooks.append(("on_model_call", call))
        async for item in call_next(call):
            yield item

    async def on_acting(
        self, call: ActingCall, call_next: Callable[[ActingCall], AsyncIterator[AgentEvent]]
    ) -> AsyncIterator[AgentEvent]:
        """Record the tool call."""
        self.hooks.append(("on_acting", call))
        async for event in call_next(call):
            yield event

    def hook_names(self) -> list[str]:
        """The hooks seen, in order."""
        return [name for name, _ in self.hooks]
