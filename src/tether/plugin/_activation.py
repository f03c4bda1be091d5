"""The built-in `plugin_activation` plugin's tools: `activate_plugin`, `extend_plugin_activation`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, ConfigDict

from tether.errors import ToolError
from tether.event import PluginActivatedEvent
from tether.message import ToolResultBlock, ToolResultState
from tether.plugin._strategy import DEFAULT_ACTIVE_ROUNDS, MAX_ACTIVE_ROUNDS
from tether.tool import TOOL_REFERENCES_KEY, ToolBase, ToolContext, ToolOutput

if TYPE_CHECKING:
    from tether.plugin._scheduler import PluginScheduler

__all__ = [
    "ACTIVATE_TOOL",
    "EXTEND_TOOL",
    "ActivatePluginTool",
    "ActivationOutcome",
    "ExtendPluginActivationTool",
]

ACTIVATE_TOOL = "activate_plugin"
EXTEND_TOOL = "extend_plugin_activation"


@dataclass(frozen=True, slots=True)
class ActivationOutcome:
    """What an activation or extension did: the text for the model, and the new rounds."""

    text: str
    """The tool result the model reads."""
    is_error: bool = False
    """The call could not do what it asked (unknown, disabled, asleep for `extend`)."""
    rounds_left: int | None = None
    """Set when the plugin was woken or extended: its replies left."""
    tool_names: tuple[str, ...] = ()
    """The tools a wake made callable: the answer references them, so a provider that
    loads deferred tool definitions on demand loads them here."""


class ActivatePluginInput(BaseModel):
    """Arguments of `activate_plugin`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    module_name: str
    """The module_name of a sleeping plugin, as written in the plugin catalogue."""
    rounds: int = DEFAULT_ACTIVE_ROUNDS
    """How many replies after this one the plugin stays awake (1 to 20)."""


class ExtendPluginActivationInput(BaseModel):
    """Arguments of `extend_plugin_activation`."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    module_name: str
    """The module_name of an active plugin."""
    rounds: int = DEFAULT_ACTIVE_ROUNDS
    """How many replies to add to the ones it has left (1 to 20; at most 20 in all)."""


class _SchedulerTool(ToolBase):
    is_read_only = True  # it changes what the model sees, nothing outside the agent
    is_concurrency_safe = True  # the state is re-checked after every await before it changes

    def __init__(self, scheduler: PluginScheduler) -> None:
        self._scheduler = scheduler

    @staticmethod
    def _state(context: ToolContext) -> Any:
        if context.session_state is None:
            raise ToolError(
                "plugin activation tools need the session state; run them through an Agent "
                "(ToolContext.session_state was None)"
            )
        return context.session_state

    @staticmethod
    async def _answer(context: ToolContext, module: str, outcome: ActivationOutcome) -> ToolOutput:
        if outcome.rounds_left is not None and context.emit is not None:
            await context.emit(
                PluginActivatedEvent(
                    reply_id=context.reply_id, module_name=module, rounds_left=outcome.rounds_left
                )
            )
        if outcome.is_error:
            return ToolResultBlock(id="", name="", output=outcome.text, state=ToolResultState.ERROR)
        if outcome.tool_names:
            references = {TOOL_REFERENCES_KEY: list(outcome.tool_names)}
            return ToolResultBlock(id="", name="", output=outcome.text, metadata=references)
        return outcome.text


class ActivatePluginTool(_SchedulerTool):
    """`activate_plugin(module_name, rounds=3)`: wake a sleeping plugin for a few replies."""

    name = ACTIVATE_TOOL
    description = (
        "Wake a sleeping plugin listed in the plugin catalogue so its tools and full "
        f"instructions become available from your next step, for `rounds` replies after this "
        f"one (default {DEFAULT_ACTIVE_ROUNDS}, at most {MAX_ACTIVE_ROUNDS}). Returns the "
        "plugin's full block; stop there and continue in the next step."
    )
    input_model = ActivatePluginInput

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Wake the plugin and return its full block."""
        assert isinstance(tool_input, ActivatePluginInput)
        state = self._state(context)
        outcome = await self._scheduler.activate(state, tool_input.module_name, tool_input.rounds)
        return await self._answer(context, tool_input.module_name, outcome)


class ExtendPluginActivationTool(_SchedulerTool):
    """`extend_plugin_activation(module_name, rounds=3)`: keep an active plugin awake longer."""

    name = EXTEND_TOOL
    description = (
        "Add `rounds` replies to an active plugin's remaining ones (default "
        f"{DEFAULT_ACTIVE_ROUNDS}; at most {MAX_ACTIVE_ROUNDS} in all). Use it when a plugin's "
        "block says it is in its last visible run and you will still need it."
    )
    input_model = ExtendPluginActivationInput

    async def call(self, tool_input: BaseModel, context: ToolContext) -> ToolOutput:
        """Extend the plugin's activation."""
        assert isinstance(tool_input, ExtendPluginActivationInput)
        state = self._state(context)
        outcome = self._scheduler.extend(state, tool_input.module_name, tool_input.rounds)
        return await self._answer(context, tool_input.module_name, outcome)
