"""`AgentState`: the persistable progress of a session."""

from tether.state._migrate import register_migration
from tether.state._pending import PendingReply
from tether.state._state import SCHEMA_VERSION, AgentState, Checkpoint, ReplyCursor

__all__ = [
    "SCHEMA_VERSION",
    "AgentState",
    "Checkpoint",
    "PendingReply",
    "ReplyCursor",
    "register_migration",
]
