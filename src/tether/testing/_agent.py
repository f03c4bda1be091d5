"""An agent that plays a script, and one reply run to its list of events, for short tests."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tether.agent import Agent, ContextConfig, ModelConfig, ReActConfig
from tether.errors import ConfigError
from tether.event import AgentEvent, ResumeEvent, ToolResultEndEvent
from tether.message import Msg, ToolResultBlock, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ChatModelBase, ScriptedChatModel, ScriptedResponse
from tether.state import AgentState
from tether.testing._record import collect
from tether.tool import ToolBase, Toolkit

__all__ = ["reply_events", "scripted_agent", "tool_results"]


def scripted_agent(
    *steps: ScriptedResponse,
    tools: Iterable[ToolBase | Callable[..., Any]] = (),
    model: ChatModelBase | None = None,
    context_length: int = 128_000,
    name: str = "assistant",
    system_prompt: str = "You help.",
    toolkit: Toolkit | None = None,
    state: AgentState | None = None,
    middlewares: Sequence[MiddlewareBase] | None = None,
    react_config: ReActConfig | None = None,
    context_config: ContextConfig | None = None,
    model_config: ModelConfig | None = None,
) -> Agent:
    """An `Agent` for a test: a `ScriptedChatModel` playing `steps`, and a few tools.

    ```python
    agent = scripted_agent(
        AssistantMsg("a", [ScriptedChatModel.tool_call("ping")]), AssistantMsg("a", "done"),
        tools=[ping],
    )
    ```

    Keep the model in a variable and pass it as `model=` when the test reads its
    `calls` or calls `assert_complete()`; the other keywords are `Agent`'s.

    Args:
        *steps: The script (see `ScriptedResponse`); leave it empty when giving `model`.
        tools: Tools or plain functions for a new `Toolkit`; leave it empty when giving
            `toolkit`.
        model: A model to use instead of a `ScriptedChatModel` of `steps`.
        context_length: The scripted model's context window, in tokens.
        name: The agent's name.
        system_prompt: The agent's system prompt.
        toolkit: A toolkit to use instead of one made of `tools`.
        state: The session state to start from (a fresh one by default).
        middlewares: As for `Agent`.
        react_config: As for `Agent`.
        context_config: As for `Agent`.
        model_config: As for `Agent`.

    Raises:
        ConfigError: both `steps` and `model`, or both `tools` and `toolkit`, are given.
    """
    tool_list = list(tools)
    if model is not None and steps:
        raise ConfigError("scripted_agent takes `steps` or `model=`, not both")
    if toolkit is not None and tool_list:
        raise ConfigError("scripted_agent takes `tools=` or `toolkit=`, not both")
    return Agent(
        name,
        system_prompt,
        model if model is not None else ScriptedChatModel(steps, context_length=context_length),
        toolkit=toolkit if toolkit is not None else Toolkit(tools=tool_list),
        state=state,
        middlewares=middlewares,
        react_config=react_config,
        context_config=context_config,
        model_config=model_config,
    )


async def reply_events(
    agent: Agent, inputs: str | Msg | list[Msg] | ResumeEvent | None = None
) -> list[AgentEvent]:
    """Run one reply through `agent.reply_stream` and return its events.

    A plain string is the user's message (`UserMsg("user", text)`); anything else goes to
    `reply_stream` as it is (messages, a resume event, or `None` to continue).
    """
    given = UserMsg("user", inputs) if isinstance(inputs, str) else inputs
    return await collect(agent.reply_stream(given))


def tool_results(events: Iterable[AgentEvent]) -> list[ToolResultBlock]:
    """The tool results among `events` (from each `ToolResultEndEvent`), in order."""
    return [e.tool_result for e in events if isinstance(e, ToolResultEndEvent)]
