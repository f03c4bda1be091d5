"""`Run`: what one `reply_stream` call works with (the agent's config and the state)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import BaseModel

from tether.context import fit_tool_result
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, ToolResultState
from tether.state import AgentState, ReplyCursor
from tether.tool._batch_run import call_arguments

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

    async def commit(self, call: ToolCallBlock, result: ToolResultBlock) -> None:
        """Put a call's result into the reply (the context copy, cut if too long)."""
        agent, state = self.agent, self.state
        kept = await fit_tool_result(result, agent.context_config, agent.offloader, state)
        msg = state.reply_msg()
        assert msg is not None
        msg.put_tool_result(kept)
        call.state = ToolCallState.FINISHED
        state.note_blocks([kept])
        if call.name == STRUCTURED_TOOL and result.state is ToolResultState.SUCCESS:
            args = call_arguments(call) or {}
            model = self.structured_model
            msg.metadata["structured_output"] = (
                model.model_validate(args).model_dump(mode="json") if model is not None else args
            )
            self.cursor.finished = True
