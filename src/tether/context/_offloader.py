"""The `Offloader` protocol: where compressed messages and cut tool output go."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from tether.message import Msg

__all__ = ["Offloader"]


@runtime_checkable
class Offloader(Protocol):
    """Writes what leaves the context somewhere the agent can read it back."""

    async def offload_messages(self, session_id: str, messages: list[Msg]) -> str:
        """Append `messages` to the session's log; return a path the agent can Read."""
        ...

    async def offload_text(self, session_id: str, name: str, text: str) -> str:
        """Store a full text (e.g. a truncated tool result); return its path."""
        ...
