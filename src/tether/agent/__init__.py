"""The `Agent`: a stateless reason-act loop over an `AgentState`."""

from tether.agent._agent import Agent
from tether.agent._config import ModelConfig, ReActConfig
from tether.agent._pending import pending_calls
from tether.agent._remote import A2AAgent
from tether.agent._remote_tool import A2ATool
from tether.agent._subagent import AgentTool, TaskInput
from tether.context import ContextConfig

__all__ = [
    "A2AAgent",
    "A2ATool",
    "Agent",
    "AgentTool",
    "ContextConfig",
    "ModelConfig",
    "ReActConfig",
    "TaskInput",
    "pending_calls",
]
