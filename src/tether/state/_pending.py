"""`PendingReply`: what a loaded session's reply in progress waits for, as typed values."""

from pydantic import BaseModel, ConfigDict, Field

from tether.message import Msg, ToolCallBlock, ToolCallState, detached

__all__ = ["PendingReply", "pending_of"]


class PendingReply(BaseModel):
    """The reply in progress of a state, and the tool calls it cannot finish by itself.

    Every call is a copy: changing it changes nothing in the state.
    """

    model_config = ConfigDict(defer_build=True, frozen=True, extra="forbid")

    reply_id: str
    """The id of the reply in progress (the `reply_id` a resume event must carry)."""
    awaiting_confirmation: list[ToolCallBlock] = Field(default_factory=list)
    """Calls waiting for the user; each carries its `suggested_rules`."""
    awaiting_external: list[ToolCallBlock] = Field(default_factory=list)
    """Calls handed to an external executor, waiting for their results."""
    unknown_outcome: list[ToolCallBlock] = Field(default_factory=list)
    """Calls that were running when their process stopped: continuing the reply answers
    them as interrupted (or runs them again, for idempotent tools)."""

    @property
    def is_paused(self) -> bool:
        """Whether the reply waits for outside input (a confirmation or an external result)."""
        return bool(self.awaiting_confirmation or self.awaiting_external)


def pending_of(reply_id: str, msg: Msg | None) -> PendingReply:
    """The pending view of the reply message `msg` (None: the reply has no message yet)."""
    calls = msg.tool_calls if msg is not None else []

    def having(state: ToolCallState) -> list[ToolCallBlock]:
        return [detached(c) for c in calls if c.state is state]

    return PendingReply(
        reply_id=reply_id,
        awaiting_confirmation=having(ToolCallState.ASKING),
        awaiting_external=having(ToolCallState.SUBMITTED),
        unknown_outcome=having(ToolCallState.RUNNING),
    )
