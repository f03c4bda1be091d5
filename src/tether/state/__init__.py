"""`AgentState`: the persistable progress of a session."""

from tether.state._fastload import check_message_json
from tether.state._json import message_json, remember_message_json
from tether.state._migrate import register_migration
from tether.state._pending import PendingReply
from tether.state._state import SCHEMA_VERSION, AgentState, Checkpoint, ReplyCursor

__all__ = [
    "SCHEMA_VERSION",
    "AgentState",
    "Checkpoint",
    "PendingReply",
    "ReplyCursor",
    "check_message_json",
    "message_json",
    "register_migration",
    "remember_message_json",
]
