"""The `Agent`: a stateless reason-act loop over an `AgentState`."""

from tether.agent._agent import Agent
from tether.agent._config import ModelConfig, ReActConfig
from tether.context import ContextConfig

__all__ = [
    "Agent",
    "ContextConfig",
    "ModelConfig",
    "ReActConfig",
]
