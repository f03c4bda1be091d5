"""Checks on `Agent(...)`'s arguments: a wrong kind fails at construction, naming the fix."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from tether.agent._config import ModelConfig, ReActConfig
from tether.context import ContextConfig, Offloader
from tether.errors import ArgumentError
from tether.middleware import MiddlewareBase
from tether.model import ChatModelBase
from tether.state import AgentState
from tether.tool import ToolBase, Toolkit

__all__ = ["check_agent_args"]


def _kind(value: Any) -> str:
    return type(value).__name__


def _check_model(model: Any) -> None:
    if isinstance(model, ChatModelBase):
        return
    if isinstance(model, str):
        raise ArgumentError(
            f"Agent(model=...) takes a model object, not the string {model!r}; build one with "
            f"`tether.model.from_string({model!r})` or a provider class such as "
            "`OpenAIChatModel(...)` (offline: `ScriptedChatModel([...])`)"
        )
    raise ArgumentError(
        f"Agent(model=...) must be a `ChatModelBase` (e.g. `OpenAIChatModel(...)`, "
        f"`ScriptedChatModel([...])`), got {_kind(model)}"
    )


def _check_toolkit(toolkit: Any) -> None:
    if toolkit is None or isinstance(toolkit, Toolkit):
        return
    if (
        isinstance(toolkit, list | tuple | set)
        or isinstance(toolkit, ToolBase)
        or callable(toolkit)
    ):
        raise ArgumentError(
            f"Agent(toolkit=...) takes a `Toolkit`, got {_kind(toolkit)}; wrap the tools: "
            "`Agent(..., toolkit=Toolkit(tools=[...]))`"
        )
    raise ArgumentError(f"Agent(toolkit=...) must be a `Toolkit` or None, got {_kind(toolkit)}")


def _check_state(state: Any) -> None:
    if state is None or isinstance(state, AgentState):
        return
    hint = ""
    if isinstance(state, Mapping | str | bytes):
        hint = "; load saved state with `AgentState.model_validate(...)` / `model_validate_json`"
    raise ArgumentError(
        f"Agent(state=...) must be an `AgentState` or None, got {_kind(state)}{hint}"
    )


def _check_middlewares(middlewares: Any) -> None:
    if middlewares is None:
        return
    if isinstance(middlewares, MiddlewareBase):
        raise ArgumentError(
            "Agent(middlewares=...) takes a list; write `middlewares=[...]` around the one "
            f"{_kind(middlewares)}"
        )
    if isinstance(middlewares, str | bytes | Mapping) or not hasattr(middlewares, "__iter__"):
        raise ArgumentError(
            f"Agent(middlewares=...) must be a list of `MiddlewareBase`, got {_kind(middlewares)}"
        )
    for i, middleware in enumerate(middlewares):
        if not isinstance(middleware, MiddlewareBase):
            raise ArgumentError(
                f"Agent(middlewares=...)[{i}] must be a `MiddlewareBase` subclass instance, "
                f"got {_kind(middleware)}"
            )


_CONFIGS: dict[str, type] = {
    "model_config": ModelConfig,
    "context_config": ContextConfig,
    "react_config": ReActConfig,
}


def _check_config(arg: str, value: Any) -> None:
    expected = _CONFIGS[arg]
    if value is None or isinstance(value, expected):
        return
    hint = f"; write `{arg}={expected.__name__}(**...)`" if isinstance(value, Mapping) else ""
    raise ArgumentError(
        f"Agent({arg}=...) must be a `{expected.__name__}` or None, got {_kind(value)}{hint}"
    )


def check_agent_args(
    name: Any, system_prompt: Any, model: Any, toolkit: Any, state: Any, offloader: Any,
    middlewares: Any, configs: Mapping[str, Any],
) -> None:  # fmt: skip
    """Raise `ArgumentError` naming the first argument of `Agent(...)` of the wrong kind."""
    if not isinstance(name, str) or not name:
        raise ArgumentError(f"Agent(name=...) must be a non-empty str, got {name!r}")
    if not isinstance(system_prompt, str):
        raise ArgumentError(f"Agent(system_prompt=...) must be a str, got {_kind(system_prompt)}")
    _check_model(model)
    _check_toolkit(toolkit)
    _check_state(state)
    if offloader is not None and not isinstance(offloader, Offloader):
        raise ArgumentError(
            f"Agent(offloader=...) must be an `Offloader` (e.g. `LocalFileOffloader(dir)`), "
            f"got {_kind(offloader)}"
        )
    _check_middlewares(middlewares)
    for arg, value in configs.items():
        _check_config(arg, value)
