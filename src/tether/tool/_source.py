"""The tool-source protocol: how MCP servers, skills and plugins offer tools to a toolkit."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tether.tool._base import ToolBase

if TYPE_CHECKING:
    from tether.event import AgentEvent
    from tether.state import AgentState

__all__ = ["DEFERRABLE_KEY", "TOOL_REFERENCES_KEY", "PromptParts", "ToolSourceBase"]

DEFERRABLE_KEY = "deferrable"
"""Set (`True`) in a stable tool schema whose tool is callable only at times (a sleeping
plugin's): providers that can load tool definitions on demand send it deferred."""

TOOL_REFERENCES_KEY = "tool_references"
"""`ToolResultBlock.metadata` key: names of tools the result makes callable (a plugin's
wake); providers with on-demand tool loading load their definitions there."""


@dataclass(frozen=True, slots=True)
class PromptParts:
    """A source's contribution to the system prompt.

    `stable` text must be byte-identical between steps while nothing changes (it goes
    first, so provider prompt caching keeps working); `dynamic` text may change every
    step and goes after every source's stable part.
    """

    stable: str = ""
    dynamic: str = ""
    dynamic_tail: str | None = None
    """A short form of `dynamic` for requests whose conversation already holds the rest (a
    caching provider sends it last instead); `None`: `dynamic` itself."""


class ToolSourceBase(ABC):
    """Something that offers tools that may change with the session's state.

    `state` is the session's `AgentState`. Only `list_tools` is required.
    """

    name: str = "source"
    """A short name for messages and logs."""

    @abstractmethod
    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        """The tools the model may call now."""

    async def prompt(self, state: AgentState) -> PromptParts | None:
        """Text for the system prompt (e.g. the skill list, plugin blocks)."""
        return None

    def stable_schemas(self, tools: list[ToolBase]) -> list[dict[str, Any]] | None:
        """The schemas a caching provider sends for this source, the same at every step.

        `tools` are the source's tools now. The default sends them as they are; a source
        whose tools come and go (sleeping plugins) returns a fixed list instead, with
        stand-ins for tools not callable now, or `None` to send its current tools after
        everything stable.
        """
        return [t.json_schema() for t in tools]

    def unavailable_hint(self, tool_name: str, state: AgentState) -> str | None:
        """If `tool_name` is one of ours but not callable now, say what to do."""
        return None

    async def on_reply_end(self, state: AgentState, reply_id: str) -> list[AgentEvent]:
        """Called once when a reply completes (e.g. to count plugin rounds)."""
        return []

    async def aclose(self) -> None:  # noqa: B027  # optional hook, a no-op by default
        """Release connections or processes."""
