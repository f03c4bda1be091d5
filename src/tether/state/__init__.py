"""`AgentState`: the persistable progress of a session."""

from tether.state._migrate import register_migration
from tether.state._pending import PendingReply
from tether.state._state import (
    SCHEMA_VERSION,
    AgentState,
    Checkpoint,
    ReplyCursor,
    RestoringCheckpoint,
)

__all__ = [
    "SCHEMA_VERSION",
    "AgentState",
    "Checkpoint",
    "PendingReply",
    "ReplyCursor",
    "RestoringCheckpoint",
    "register_migration",
]
