"""tether: LLM agents that can be trusted with real tools."""

from typing import TYPE_CHECKING

from tether.agent import Agent, ContextConfig, ModelConfig, ReActConfig
from tether.event import AgentEvent, EventType
from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg
from tether.model import ChatModelBase, ScriptedChatModel
from tether.state import AgentState
from tether.tool import FunctionTool, Toolkit

if TYPE_CHECKING:
    from tether.tool._function import tool
else:
    # The package itself, which is callable as the decorator: `tether.tool` must stay
    # the subpackage (`import tether.tool; tether.tool.Toolkit`).
    from tether import tool

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
