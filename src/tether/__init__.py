"""tether: LLM agents that can be trusted with real tools."""

from tether.agent import Agent, ContextConfig, ModelConfig, ReActConfig
from tether.event import AgentEvent, EventType
from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg
from tether.model import ChatModelBase, ScriptedChatModel
from tether.state import AgentState
from tether.tool import FunctionTool, Toolkit, tool

__version__ = "0.1.0"

__all__ = [
    "Agent",
    "AgentEvent",
    "AgentState",
    "AssistantMsg",
    "ChatModelBase",
    "ContextConfig",
    "EventType",
    "FunctionTool",
    "ModelConfig",
    "Msg",
    "ReActConfig",
    "ScriptedChatModel",
    "SystemMsg",
    "Toolkit",
    "UserMsg",
    "__version__",
    "tool",
]
