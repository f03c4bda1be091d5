"""`Run`: what one `reply_stream` call works with (the agent's config and the state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tether.state import AgentState, ReplyCursor

if TYPE_CHECKING:
    from tether.agent._agent import Agent

__all__ = ["STRUCTURED_TOOL", "Run"]

STRUCTURED_TOOL = "generate_response"
"""The tool the model calls to give a structured final answer."""


@dataclass(slots=True)
class Run:
    """One drive of the loop: the agent (configuration) and the session state."""

    agent: Agent
    state: AgentState
    structured_model: type[BaseModel] | None = None
    observed: bool = True
    """Someone watches the event stream: emit every event. False (`reply()` with no
    middleware watching): only the events the loop itself needs (REPLY_END, tool results,
    pauses, retries, compression, plugin events)."""

    @property
    def cursor(self) -> ReplyCursor:
        """The reply in progress."""
        cursor = self.state.reply
        assert cursor is not None, "no reply in progress"
        return cursor

    @property
    def reply_id(self) -> str:
        """The reply's id."""
        return self.cursor.reply_id

    def tool_state(self, name: str) -> dict[str, Any]:
        """The persistent state dict of tool `name`."""
        return self.state.tool_state_for(name)
