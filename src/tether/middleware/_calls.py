"""What each middleware hook receives: one frozen record per hook.

A hook rewrites its input by passing `dataclasses.replace(call, field=...)` on to
`call_next`. The agent, its state, the request and the tool belong to higher layers:
they are imported for type checking only, so the records carry their real types.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.message import Msg, ToolCallBlock

if TYPE_CHECKING:
    from tether.agent import Agent
    from tether.context import ContextConfig
    from tether.event import ResumeEvent
    from tether.model import ChatModelBase, ChatRequest
    from tether.state import AgentState
    from tether.tool import ToolBase

__all__ = [
    "ActingCall",
    "CompressCall",
    "ModelCall",
    "PermissionCall",
    "ReasoningCall",
    "ReplyCall",
    "SystemPromptCall",
]


@dataclass(frozen=True, slots=True)
class ReplyCall:
    """One `reply`/`reply_stream` call."""

    agent: Agent
    """The `Agent`."""
    state: AgentState
    """The session's `AgentState`."""
    inputs: Msg | list[Msg] | ResumeEvent | None
    """What the caller passed: messages, a resume event, or None."""


@dataclass(frozen=True, slots=True)
class ReasoningCall:
    """One reasoning step (prompt building and one model call)."""

    agent: Agent
    state: AgentState
    reply_id: str
    iteration: int
    """The step's number within the reply, from 1."""


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call; rewrite `request` to change what the model sees."""

    agent: Agent
    state: AgentState
    reply_id: str
    model: ChatModelBase
    """The `ChatModelBase` called first."""
    request: ChatRequest
    """The `ChatRequest`."""


@dataclass(frozen=True, slots=True)
class ActingCall:
    """One allowed tool call about to run."""

    agent: Agent
    state: AgentState
    reply_id: str
    tool_call: ToolCallBlock
    """The call (its `input` is the JSON the tool will get)."""
    tool: ToolBase
    """The `ToolBase` that will run it."""


@dataclass(frozen=True, slots=True)
class PermissionCall:
    """One permission check."""

    agent: Agent
    state: AgentState
    reply_id: str
    tool_call: ToolCallBlock
    tool: ToolBase
    tool_input: dict[str, Any]
    """The parsed arguments."""


@dataclass(frozen=True, slots=True)
class CompressCall:
    """One context compression."""

    agent: Agent
    state: AgentState
    reply_id: str | None
    config: ContextConfig
    """The `ContextConfig` in force."""


@dataclass(frozen=True, slots=True)
class SystemPromptCall:
    """Building the system prompt of one reasoning step."""

    agent: Agent
    state: AgentState
    reply_id: str
