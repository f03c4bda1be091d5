"""Who may sleep: the plugin's own `allow_sleep` and the operator's strategies, resolved."""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping
from typing import Literal, cast, get_args

from tether.errors import PluginError

__all__ = [
    "DEFAULT_ACTIVE_ROUNDS",
    "MAX_ACTIVE_ROUNDS",
    "PluginStrategy",
    "PluginVisibility",
    "can_sleep",
    "clamp_rounds",
    "validate_strategies",
]

PluginStrategy = Literal["auto", "allow_sleep", "forbid_sleep"]
"""An operator's override of one plugin's sleep behaviour (`Toolkit(plugin_strategies=...)`)."""

PluginVisibility = Literal["always_awake", "active", "sleeping"]
"""Where a plugin stands in one session: never sleeps, awake for N replies, or asleep."""

DEFAULT_ACTIVE_ROUNDS = 3
"""Replies an activation lasts when the model names no number."""

MAX_ACTIVE_ROUNDS = 20
"""The most replies a plugin can have left, whether from one call or from extensions."""

_STRATEGIES: tuple[str, ...] = get_args(PluginStrategy)


def can_sleep(allow_sleep: bool | None, sleep_brief: str, strategy: PluginStrategy) -> bool:
    """Whether a plugin takes part in scheduling, by the seed's priority (highest first).

    1. the plugin says `allow_sleep=False` → never sleeps (the developer's protection);
    2. the operator says `forbid_sleep` → does not sleep;
    3. the operator says `allow_sleep` → sleeps if it has a non-empty brief;
    4. `auto` → sleeps if the plugin says `allow_sleep=True` and has a non-empty brief.

    A brief of only whitespace counts as empty: the model would have nothing to go on.
    """
    if allow_sleep is False:
        return False
    if strategy == "forbid_sleep":
        return False
    has_brief = bool(sleep_brief.strip())
    if strategy == "allow_sleep":
        return has_brief
    return allow_sleep is True and has_brief


def clamp_rounds(rounds: int) -> int:
    """An activation length between 1 and `MAX_ACTIVE_ROUNDS`."""
    return max(1, min(MAX_ACTIVE_ROUNDS, rounds))


def validate_strategies(
    strategies: Mapping[str, str] | None, known: Collection[str]
) -> dict[str, PluginStrategy]:
    """Check an operator's strategies against the plugins there are.

    Raises:
        PluginError: a value is not a strategy, or a key names no plugin.
    """
    checked: dict[str, PluginStrategy] = {}
    for module_name, value in (strategies or {}).items():
        if module_name not in known:
            close = difflib.get_close_matches(str(module_name), sorted(known), n=1)
            hint = f" Did you mean {close[0]!r}?" if close else ""
            names = ", ".join(sorted(known)) or "(none)"
            raise PluginError(
                f"plugin_strategies names {module_name!r}, which is not the module_name of any "
                f"plugin in this toolkit.{hint} Known plugins: {names}."
            )
        if value not in _STRATEGIES:
            allowed = ", ".join(repr(s) for s in _STRATEGIES)
            raise PluginError(
                f"plugin_strategies[{module_name!r}] is {value!r}; use one of {allowed}"
            )
        checked[module_name] = cast(PluginStrategy, value)
    return checked
