"""tether: LLM agents that can be trusted with real tools.

The names below load on first use (module `__getattr__`, PEP 562): `import tether` is
cheap, and the `tether` command can set up its start-up before the agent machinery loads.
`from tether import Agent` and `tether.message.Msg` work as if everything were imported.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from tether import _lazy

if TYPE_CHECKING:
    from tether.agent import Agent, ContextConfig, ModelConfig, ReActConfig
    from tether.event import AgentEvent, EventType
    from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg
    from tether.model import ChatModelBase, ScriptedChatModel
    from tether.state import AgentState
    from tether.tool import FunctionTool, Toolkit
    from tether.tool._function import tool

__version__ = "0.2.0.dev0"

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

_HOMES = {
    "Agent": "tether.agent",
    "ContextConfig": "tether.agent",
    "ModelConfig": "tether.agent",
    "ReActConfig": "tether.agent",
    "AgentEvent": "tether.event",
    "EventType": "tether.event",
    "AssistantMsg": "tether.message",
    "Msg": "tether.message",
    "SystemMsg": "tether.message",
    "UserMsg": "tether.message",
    "ChatModelBase": "tether.model",
    "ScriptedChatModel": "tether.model",
    "AgentState": "tether.state",
    "FunctionTool": "tether.tool",
    "Toolkit": "tether.tool",
}
"""Where each name of `__all__` lives (`tool` is the subpackage, callable as the decorator)."""


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is not None:
        value = _lazy.load(__name__, name, home)
    elif name.startswith("_"):
        raise AttributeError(f"module 'tether' has no attribute {name!r}")
    else:  # a subpackage not imported yet (`tether.message.Msg` after `import tether`)
        try:
            value = importlib.import_module(f"tether.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"tether.{name}":
                raise
            raise AttributeError(f"module 'tether' has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
