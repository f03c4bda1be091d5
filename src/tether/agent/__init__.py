"""The `Agent`: a stateless reason-act loop over an `AgentState`."""

from tether._loop.next_action import Act, Action, Finish, Pause, Reason, next_action
from tether.agent._agent import Agent
from tether.agent._config import ModelConfig, ReActConfig
from tether.context import ContextConfig

__all__ = [
    "Act",
    "Action",
    "Agent",
    "ContextConfig",
    "Finish",
    "ModelConfig",
    "Pause",
    "ReActConfig",
    "Reason",
    "next_action",
]
