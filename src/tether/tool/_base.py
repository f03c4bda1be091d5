"""`ToolBase`: what every tool is, and the context a call runs in."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel

from tether.message import DataBlock, TextBlock, ToolResultBlock
from tether.permission import (
    PermissionBehavior,
    PermissionContext,
    PermissionDecision,
    PermissionRule,
)

if TYPE_CHECKING:
    from tether.event import AgentEvent
    from tether.state import AgentState

__all__ = [
    "ToolBase",
    "ToolChunk",
    "ToolContext",
    "ToolOutput",
    "allowed_by_default",
    "allows_every_call",
]

ToolOutput = str | ToolResultBlock | list[TextBlock | DataBlock]
"""What a tool may return: text, blocks, or a whole result (to set its state)."""
ToolChunk = str | ToolResultBlock
"""What a streaming tool yields: text deltas, optionally a final whole result."""


@dataclass(slots=True)
class ToolContext:
    """What a tool call may see and change besides its arguments."""

    tool_call_id: str
    """The id of the call being run."""
    reply_id: str
    """The reply the call belongs to."""
    permission_context: PermissionContext
    """Mode, work dirs and rules of the session."""
    tool_state: dict[str, Any] = field(default_factory=dict)
    """This tool's persistent state in the session (saved with `AgentState`)."""
    session_state: AgentState | None = None
    """The session's `AgentState` (for tools that schedule plugins, read skills, ...)."""
    emit: Callable[[AgentEvent], Awaitable[None]] | None = None
    """Send an extra event into the reply's stream (e.g. progress)."""

    @property
    def cwd(self) -> str:
        """The first working directory, or the process's current directory."""
        import os

        dirs = self.permission_context.working_directories
        return dirs[0] if dirs else os.getcwd()


@cache
def allowed_by_default() -> PermissionDecision:
    """`ToolBase`'s own ALLOW (one shared frozen value).

    Built on first use: constructing it at import would build pydantic schemas early.
    """
    return PermissionDecision(behavior=PermissionBehavior.ALLOW, reason="allowed by default")


class ToolBase(ABC):
    """A tool the model can call.

    Subclasses set `name`, `description` and `input_model`, and implement `call`, which
    returns a `ToolOutput` or is an async generator of `ToolChunk`s.
    """

    name: str
    """The name the model calls it by."""
    description: str
    """What it does, written for the model."""
    input_model: type[BaseModel]
    """The arguments, as a pydantic model (its JSON schema is sent to the model)."""
    is_read_only: bool = False
    """True if no call changes anything outside the agent."""
    is_concurrency_safe: bool = False
    """True if calls may run at the same time as other concurrency-safe calls."""
    is_external_tool: bool = False
    """True if calls are executed outside the agent (the reply pauses for the result)."""
    requires_confirmation: bool = False
    """True if each call asks the user unless a rule allows it."""
    is_idempotent: bool = False
    """True if running a call twice has the effect of running it once: a call whose
    process died while it ran is run again, instead of being answered as interrupted."""
    is_permission_check_local: bool = True
    """True if `check_permissions` decides from its arguments and the session alone,
    awaiting nothing outside the process (no server, no person, no other task): the loop
    may then write the model step's save point and the batch's claim as one. A subclass
    that overrides `check_permissions` gets False unless it sets this flag itself."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if "check_permissions" in cls.__dict__ and "is_permission_check_local" not in cls.__dict__:
            cls.is_permission_check_local = False

    @property
    def input_schema(self) -> dict[str, Any]:
        """The JSON schema of the arguments."""
        return self.input_model.model_json_schema()

    def json_schema(self) -> dict[str, Any]:
        """The tool as the model sees it: `{"name", "description", "parameters"}`."""
        # Tools are configuration, not session state: computing the schema once is safe.
        cached: dict[str, Any] | None = self.__dict__.get("_json_schema")
        if cached is None:
            cached = {
                "name": self.name,
                "description": self.description,
                "parameters": self.input_schema,
            }
            self.__dict__["_json_schema"] = cached
        return cached

    def is_read_only_call(self, tool_input: dict[str, Any]) -> bool:
        """Whether this particular call is read-only (Bash decides per command)."""
        return self.is_read_only

    def is_concurrency_safe_call(self, tool_input: dict[str, Any]) -> bool:
        """Whether this particular call may run concurrently with others."""
        return self.is_concurrency_safe

    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> PermissionDecision:
        """The tool's own decision once no rule and no mode has decided.

        `tool_state` is this tool's persistent state in the session (e.g. Bash's
        working directory), the same mapping the call will see as `ToolContext.tool_state`.

        The default allows read-only calls, asks for tools that require confirmation
        and allows the rest. File and shell tools override this.
        """
        if self.requires_confirmation and not self.is_read_only_call(tool_input):
            return PermissionDecision(
                behavior=PermissionBehavior.ASK,
                reason=f"{self.name} asks before each call",
                suggested_rules=self.generate_suggestions(tool_input, context, tool_state),
            )
        return allowed_by_default()

    def match_rule(
        self,
        rule: PermissionRule,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> bool:
        """Whether a rule `Name(specifier)` of this tool matches this call (default: never).

        Only called for rules with a specifier; a bare `Name` rule matches every call.
        `rule.behavior` tells how to match a compound call: a deny or ask rule matches
        if any part matches, an allow rule only if every part does.
        """
        return False

    def generate_suggestions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Mapping[str, Any] | None = None,
    ) -> list[PermissionRule]:
        """Rules the user may accept so that similar calls run without asking."""
        return [PermissionRule(tool_name=self.name, source="session")]

    @abstractmethod
    def call(
        self, tool_input: BaseModel, context: ToolContext
    ) -> Awaitable[ToolOutput] | AsyncIterator[ToolChunk]:
        """Run the tool: a coroutine returning its output, or an async generator of chunks."""

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name!r}>"


def allows_every_call(tool: ToolBase) -> bool:
    """Whether `tool`'s own check allows every call: it keeps `ToolBase`'s, no confirming.

    Its answer is then `allowed_by_default()` whatever the call (the loop relies on it to
    skip the engine where the engine defers to the tool).
    """
    return (
        type(tool).check_permissions is ToolBase.check_permissions
        and not tool.requires_confirmation
    )
