"""What each middleware hook receives: one frozen record per hook.

A hook rewrites its input by passing `dataclasses.replace(call, field=...)` on to
`call_next`. Fields typed `Any` hold objects of higher layers (the agent, its state,
a `ChatRequest`, a tool) that this ground-level package must not import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tether.message import Msg, ToolCallBlock

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

    agent: Any
    """The `Agent`."""
    state: Any
    """The session's `AgentState`."""
    inputs: Msg | list[Msg] | Any | None
    """What the caller passed: messages, a resume event, or None."""


@dataclass(frozen=True, slots=True)
class ReasoningCall:
    """One reasoning step (prompt building and one model call)."""

    agent: Any
    state: Any
    reply_id: str
    iteration: int
    """The step's number within the reply, from 1."""


@dataclass(frozen=True, slots=True)
class ModelCall:
    """One model call; rewrite `request` to change what the model sees."""

    agent: Any
    state: Any
    reply_id: str
    model: Any
    """The `ChatModelBase` called first."""
    request: Any
    """The `ChatRequest`."""


@dataclass(frozen=True, slots=True)
class ActingCall:
    """One allowed tool call about to run."""

    agent: Any
    state: Any
    reply_id: str
    tool_call: ToolCallBlock
    """The call (its `input` is the JSON the tool will get)."""
    tool: Any
    """The `ToolBase` that will run it."""


@dataclass(frozen=True, slots=True)
class PermissionCall:
    """One permission check."""

    agent: Any
    state: Any
    reply_id: str
    tool_call: ToolCallBlock
    tool: Any
    tool_input: dict[str, Any]
    """The parsed arguments."""


@dataclass(frozen=True, slots=True)
class CompressCall:
    """One context compression."""

    agent: Any
    state: Any
    reply_id: str | None
    config: Any
    """The `ContextConfig` in force."""


@dataclass(frozen=True, slots=True)
class SystemPromptCall:
    """Building the system prompt of one reasoning step."""

    agent: Any
    state: Any
    reply_id: str
