"""Plugins and activation scheduling: plugins sleep as a one-line brief until woken."""

from tether.plugin._activation import ActivatePluginTool, ExtendPluginActivationTool
from tether.plugin._plugin import InjectFunc, Plugin
from tether.plugin._scheduler import BUILTIN_MODULE, PluginScheduler
from tether.plugin._strategy import (
    DEFAULT_ACTIVE_ROUNDS,
    MAX_ACTIVE_ROUNDS,
    PluginStrategy,
    PluginVisibility,
    can_sleep,
)

__all__ = [
    "BUILTIN_MODULE",
    "DEFAULT_ACTIVE_ROUNDS",
    "MAX_ACTIVE_ROUNDS",
    "ActivatePluginTool",
    "ExtendPluginActivationTool",
    "InjectFunc",
    "Plugin",
    "PluginScheduler",
    "PluginStrategy",
    "PluginVisibility",
    "can_sleep",
]
