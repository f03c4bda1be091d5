"""One chat: the agent, where its session is saved, and driving one stream of a reply."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, cast

from tether.agent import Agent
from tether.cli.chat._build import ChatOptions, apply_permissions
from tether.cli.chat._instructions import Instruction
from tether.cli.chat._sessions import SessionStore
from tether.errors import SessionConflictError
from tether.event import (
    AgentEvent,
    ExternalExecutionResultEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import Msg, ToolCallState
from tether.state import AgentState

if TYPE_CHECKING:
    from tether.mcp import MCPClient

__all__ = ["Chat", "Inputs", "is_asking"]

Inputs = Msg | UserConfirmResultEvent | ExternalExecutionResultEvent | UserInterruptEvent | None
"""What starts or resumes a reply."""


def is_asking(state: AgentState) -> bool:
    """Whether the session's reply is paused on a confirmation."""
    msg = state.reply_msg()
    return msg is not None and any(c.state is ToolCallState.ASKING for c in msg.tool_calls)


@dataclass
class Chat:
    """The agent of this chat and its session store."""

    agent: Agent
    store: SessionStore
    options: ChatOptions
    model_spec: str
    mcps: list[MCPClient] = field(default_factory=list)
    plugin_names: list[str] = field(default_factory=list)
    instructions: list[Instruction] = field(default_factory=list)
    """The `AGENTS.md` files in the system prompt."""

    async def save(self) -> None:
        """Save the session as it is now."""
        await self.store.save(self.agent.state)

    def fresh_state(self) -> AgentState:
        """A new session with this chat's permissions."""
        state = AgentState()
        apply_permissions(state, self.options, fresh=True)
        return state

    async def stream(
        self, inputs: Inputs, on_event: Callable[[AgentEvent], None]
    ) -> RequireUserConfirmEvent | None:
        """Run one stream of the reply, saved at every save point; return its pause.

        The session is written first (so it exists, with its title), then the library's
        checkpoint saves it at each save point (start, model steps, tool batches and
        results, the pause, the end). A stream stopped by Ctrl+C or failed is saved once
        more as the library settled it.
        """
        if isinstance(inputs, Msg) and not self.store.title:
            self.store.title = " ".join((inputs.get_text_content(" ") or "").split())[:60]
        await self.save()
        state = self.agent.state
        pause: RequireUserConfirmEvent | None = None
        checkpoint = self.store.checkpoint(state)
        stream = self.agent.reply_stream(inputs, checkpoint=checkpoint)
        try:
            async with aclosing(cast("AsyncGenerator[AgentEvent, None]", stream)) as events:
                async for event in events:
                    on_event(event)
                    if isinstance(event, RequireUserConfirmEvent):
                        pause = event
        except BaseException as exc:
            if not isinstance(exc, SessionConflictError):  # another writer's state stays
                await self.save()  # the settled state (e.g. a stopped Bash call: interrupted)
            raise
        return pause

    async def close(self) -> None:
        """Stop MCP servers and release the database."""
        for client in self.mcps:
            await client.aclose()
        await self.store.close()
