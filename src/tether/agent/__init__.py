"""The `Agent`: a stateless reason-act loop over an `AgentState`."""

from tether._loop.next_action import Act, Action, Finish, Pause, Reason, next_action
from tether.agent._agent import Agent
from tether.agent._config import ModelConfig, ReActConfig
from tether.agent._pending import pending_calls
from tether.agent._subagent import AgentTool, TaskInput
from tether.context import ContextConfig

__all__ = [
    "Act",
    "Action",
    "Agent",
    "AgentTool",
    "ContextConfig",
    "Finish",
    "ModelConfig",
    "Pause",
    "ReActConfig",
    "Reason",
    "TaskInput",
    "next_action",
    "pending_calls",
]
