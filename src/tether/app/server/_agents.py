"""Finding the agents to serve: a mapping, or a (sync or async) callable returning one."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from tether.agent import Agent
from tether.errors import ConfigError

__all__ = ["AgentsSource", "import_agents", "resolve_agents"]

AgentsSource = (
    Mapping[str, Agent]
    | Callable[[], Mapping[str, Agent]]
    | Callable[[], Awaitable[Mapping[str, Agent]]]
)
"""What `create_app` and `tether serve --agents` take."""


def import_agents(spec: str) -> Any:
    """Import `MODULE:ATTR` with the current directory first on `sys.path`."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"--agents must be `MODULE:ATTR` (e.g. `agents:AGENTS`), got {spec!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(
            f"cannot import {module_name!r} for --agents ({exc}); run `tether serve` from the "
            "folder that holds it, or make it importable"
        ) from exc
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"module {module_name!r} has no attribute {attr!r}") from None


async def resolve_agents(source: Any) -> dict[str, Agent]:
    """The agents `source` stands for, checked."""
    value = source
    if callable(value) and not isinstance(value, Mapping):
        value = value()
    if inspect.isawaitable(value):
        value = await value
    if not isinstance(value, Mapping) or not value:
        raise ConfigError(
            "the agents to serve must be a non-empty mapping `agent_id -> Agent` (or a "
            f"callable returning one), got {type(value).__name__}"
        )
    agents: dict[str, Agent] = {}
    for agent_id, agent in value.items():
        if not isinstance(agent_id, str) or not agent_id or not isinstance(agent, Agent):
            raise ConfigError(
                f"agent {agent_id!r} must be an `Agent` under a non-empty string id, got "
                f"{type(agent).__name__}"
            )
        agents[agent_id] = agent
    return agents
