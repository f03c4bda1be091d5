"""`PluginScheduler`: the tool source that shows plugins in full only while they are awake."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

import tether.plugin._render as text
from tether.errors import PluginError
from tether.event import AgentEvent, PluginSleptEvent
from tether.message import ToolResultBlock
from tether.plugin._activation import (
    ACTIVATE_TOOL,
    EXTEND_TOOL,
    ActivatePluginTool,
    ActivationOutcome,
    ExtendPluginActivationTool,
)
from tether.plugin._plugin import Plugin
from tether.plugin._session import (
    activated_in_reply,
    activated_in_this_step,
    clear_marker,
    is_acting,
    mark_activated,
)
from tether.plugin._strategy import (
    MAX_ACTIVE_ROUNDS,
    PluginStrategy,
    PluginVisibility,
    can_sleep,
    clamp_rounds,
    validate_strategies,
)
from tether.tool import (
    DEFERRABLE_KEY,
    TOOL_REFERENCES_KEY,
    PromptParts,
    ToolBase,
    ToolSourceBase,
)

if TYPE_CHECKING:
    from tether.state import AgentState

__all__ = ["BUILTIN_MODULE", "PluginScheduler"]

BUILTIN_MODULE = "plugin_activation"
"""The module name of the built-in plugin that offers the activation tools (never sleeps)."""

_log = logging.getLogger("tether.plugin")

_Awake = tuple[Plugin, PluginVisibility, int | None]
_Offered = tuple[Plugin, PluginVisibility, int | None, list[ToolBase]]


def _woken_in_context(state: AgentState) -> set[str]:
    """Tools whose plugin's wake answer (with its full block) is still in the context."""
    found: set[str] = set()
    for msg in state.context:
        for block in msg.content:
            if isinstance(block, ToolResultBlock) and block.metadata:
                found.update(block.metadata.get(TOOL_REFERENCES_KEY) or ())
    return found


def _index(plugins: Iterable[Plugin]) -> dict[str, Plugin]:
    by_module: dict[str, Plugin] = {}
    owner: dict[str, str] = {ACTIVATE_TOOL: BUILTIN_MODULE, EXTEND_TOOL: BUILTIN_MODULE}
    for p in plugins:
        if not isinstance(p, Plugin):
            raise PluginError(
                f"`Toolkit(plugins=...)` takes `Plugin` objects, got {p!r}; wrap an MCP client "
                "or skill loader with `Plugin.from_source(...)`"
            )
        if p.module_name == BUILTIN_MODULE:
            raise PluginError(f"module_name {BUILTIN_MODULE!r} is reserved for the built-in plugin")
        if p.module_name in by_module:
            raise PluginError(
                f"two plugins have module_name {p.module_name!r}; module names must be unique"
            )
        for t in p.tools:
            if t.name in owner:
                raise PluginError(
                    f"tool {t.name!r} is offered by both plugin {owner[t.name]!r} and plugin "
                    f"{p.module_name!r}; rename one with `FunctionTool(func, name=...)`"
                )
            owner[t.name] = p.module_name
        by_module[p.module_name] = p
    return dict(sorted(by_module.items()))


class PluginScheduler(ToolSourceBase):
    """Offers plugins' tools and prompt blocks according to each session's activations.

    `Toolkit(plugins=[...], plugin_strategies={...})` makes one. Everything per session
    lives in `AgentState.plugins` (module name → replies left), so one scheduler serves
    any number of sessions.

    Args:
        plugins: The plugins.
        strategies: Operator overrides by module name: `"auto"` (default),
            `"allow_sleep"` or `"forbid_sleep"`.

    Raises:
        PluginError: two plugins share a module name or a tool name, or a strategy is
            invalid or names no plugin.
    """

    name = "plugins"

    def __init__(
        self, plugins: Iterable[Plugin], *, strategies: Mapping[str, str] | None = None
    ) -> None:
        self._plugins = _index(plugins)
        self.strategies: dict[str, PluginStrategy] = validate_strategies(
            strategies, {*self._plugins, BUILTIN_MODULE}
        )
        self._sleepable = frozenset(
            m
            for m, p in self._plugins.items()
            if p.enabled and can_sleep(p.allow_sleep, p.sleep_brief, self.strategies.get(m, "auto"))
        )
        self._activation_tools: list[ToolBase] = (
            [ActivatePluginTool(self), ExtendPluginActivationTool(self)] if self._sleepable else []
        )
        catalogue = text.render_catalogue([self._plugins[m] for m in sorted(self._sleepable)])
        static = [
            text.render_block(p, "always_awake", p.tools)
            for m, p in self._plugins.items()
            if p.enabled and m not in self._sleepable and not p.is_dynamic
        ]
        self._stable = "\n\n".join(s for s in [catalogue, *static] if s)
        self._stable_schemas: list[dict[str, Any]] | None = None

    @property
    def known_tool_names(self) -> frozenset[str]:
        """Names of the tools its plugins can offer, known ahead (wrapped sources' are not)."""
        names = {t.name for p in self._plugins.values() for t in p.tools}
        return frozenset(names | {t.name for t in self._activation_tools})

    @property
    def plugins(self) -> list[Plugin]:
        """The plugins, sorted by module name (the built-in one is not listed)."""
        return list(self._plugins.values())

    def can_sleep(self, module_name: str) -> bool:
        """Whether the plugin takes part in scheduling (after the operator's strategy)."""
        return module_name in self._sleepable

    def visibility(self, module_name: str, state: AgentState) -> PluginVisibility:
        """Where the plugin stands in the session `state`.

        Raises:
            PluginError: no plugin has this module name.
        """
        if module_name == BUILTIN_MODULE:
            return "always_awake"
        if module_name not in self._plugins:
            raise PluginError(f"no plugin has module_name {module_name!r}")
        if module_name not in self._sleepable:
            return "always_awake" if self._plugins[module_name].enabled else "sleeping"
        return "active" if state.plugins.get(module_name, 0) > 0 else "sleeping"

    def _awake(self, state: AgentState, *, with_fresh: bool = False) -> list[_Awake]:
        """Always-awake plugins, then active ones; `with_fresh` adds those woken this step."""
        always: list[_Awake] = []
        active: list[_Awake] = []
        for m, p in self._plugins.items():
            if not p.enabled:
                continue
            if m not in self._sleepable:
                always.append((p, "always_awake", None))
                continue
            left = state.plugins.get(m, 0)
            if left > 0 and (with_fresh or not activated_in_this_step(state, m)):
                active.append((p, "active", left))
        return always + active

    async def _offered(self, state: AgentState, *, with_fresh: bool = False) -> list[_Offered]:
        """The awake plugins with the tools each really offers now.

        Two sources can come to offer one tool name while both are awake (a server added
        a tool; the configuration changed). The first plugin in `_awake` order keeps the
        name and the other's tool is left out, so the reply goes on instead of failing on
        a duplicate tool; activation refuses to create such a clash in the first place.
        """
        taken = {t.name: BUILTIN_MODULE for t in self._activation_tools}
        offered: list[_Offered] = []
        for plugin, visibility, left in self._awake(state, with_fresh=with_fresh):
            tools: list[ToolBase] = []
            for t in await plugin.list_tools(state):
                if t.name in taken:
                    _log.warning(
                        "plugin %r offers tool %r, which plugin %r offers too; left out",
                        plugin.module_name,
                        t.name,
                        taken[t.name],
                    )
                    continue
                taken[t.name] = plugin.module_name
                tools.append(t)
            offered.append((plugin, visibility, left, tools))
        return offered

    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        """The activation tools, then the tools of every awake plugin."""
        tools = list(self._activation_tools)
        for _, _, _, offered in await self._offered(state):
            tools.extend(offered)
        return tools

    def stable_schemas(self, tools: list[ToolBase]) -> list[dict[str, Any]] | None:
        """The activation tools and static always-awake plugins' tools, then the rest.

        Every tool of a plugin that may sleep is listed too, awake or not, marked
        `deferrable` (`DEFERRABLE_KEY`): a provider that can load tool definitions on
        demand sends them deferred, so waking a plugin leaves the cached prefix intact;
        others send only the callable ones, after the stable tools. A call while the
        plugin sleeps is refused as before. Tools of wrapped sources, unknown ahead, are
        sent after the stable list while they are offered.
        """
        if self._stable_schemas is None:
            schemas = [t.json_schema() for t in self._activation_tools]
            for m, p in self._plugins.items():
                if p.enabled and not p.is_dynamic and m not in self._sleepable:
                    schemas.extend(t.json_schema() for t in p.tools)
            for m in sorted(self._sleepable):
                p = self._plugins[m]
                if p.source is None:
                    schemas.extend({**t.json_schema(), DEFERRABLE_KEY: True} for t in p.tools)
            self._stable_schemas = schemas
        return self._stable_schemas

    async def prompt(self, state: AgentState) -> PromptParts | None:
        """Stable: the catalogue of briefs and static always-awake blocks; dynamic: the rest."""
        acting = is_acting(state)
        fresh = activated_in_reply(state, state.reply.reply_id) if state.reply else set()
        dynamic: list[str] = []
        tail: list[str] = []
        loaded: set[str] | None = None
        for plugin, visibility, left, tools in await self._offered(state):
            if visibility == "always_awake" and not plugin.is_dynamic:
                continue  # already in the stable part
            # An acting step's prompt is never sent: skip the (maybe costly) injection.
            injected = None if acting else await self._injected(plugin, state)
            hint = left == 1 and plugin.module_name not in fresh
            block = text.render_block(
                plugin, visibility, tools, rounds_left=left, injected=injected, hint=hint
            )
            dynamic.append(block)
            if visibility == "active" and tools and loaded is None:
                loaded = _woken_in_context(state)
            if loaded and visibility == "active" and tools and {t.name for t in tools} <= loaded:
                status = text.render_status(plugin, rounds_left=left, injected=injected, hint=hint)
                tail.append(status)
            else:
                tail.append(block)
        if not self._stable and not dynamic:
            return None
        return PromptParts(
            stable=self._stable, dynamic="\n\n".join(dynamic), dynamic_tail="\n\n".join(tail)
        )

    @staticmethod
    async def _injected(plugin: Plugin, state: AgentState) -> str:
        try:
            return await plugin.injected_text(state)
        except Exception as exc:  # a plugin's bug must not end the user's conversation
            _log.warning("prompt injection of plugin %r failed", plugin.module_name, exc_info=True)
            return f"(This plugin's live context could not be loaded: {type(exc).__name__}: {exc})"

    def unavailable_hint(self, tool_name: str, state: AgentState) -> str | None:
        """Why a plugin's tool cannot be called now: asleep, disabled, or woken this step."""
        for m, plugin in self._plugins.items():
            if plugin.owns(tool_name):
                if not plugin.enabled:
                    return text.disabled_tool_hint(tool_name, m)
                if m in self._sleepable and state.plugins.get(m, 0) <= 0:
                    return text.sleeping_tool_hint(tool_name, m)
                if m in self._sleepable and activated_in_this_step(state, m):
                    return text.same_step_tool_hint(tool_name, m)
            if (
                plugin.source is not None
                and plugin.enabled
                and self.visibility(m, state) != ("sleeping")
            ):
                hint = plugin.source.unavailable_hint(tool_name, state)
                if hint:
                    return hint
        return None

    def _lookup(self, module_name: str) -> Plugin | ActivationOutcome:
        if module_name == BUILTIN_MODULE:
            return ActivationOutcome(text.always_awake_text(module_name))
        plugin = self._plugins.get(module_name)
        if plugin is None:
            enabled = [m for m, p in self._plugins.items() if p.enabled]
            # the model may name a plugin by its display name (e.g. the seed's "笔记插件")
            wanted = module_name.strip().casefold()
            named = [m for m in enabled if self._plugins[m].name.strip().casefold() == wanted]
            close = named or difflib.get_close_matches(module_name, enabled, n=1)
            activatable = sorted(self._sleepable)
            return ActivationOutcome(
                text.unknown_text(module_name, activatable, close[0] if close else None),
                is_error=True,
            )
        if not plugin.enabled:
            return ActivationOutcome(text.disabled_text(module_name), is_error=True)
        if module_name not in self._sleepable:
            return ActivationOutcome(text.always_awake_text(module_name))
        return plugin

    @staticmethod
    def _runs_after_this(state: AgentState, module_name: str) -> int:
        left = state.plugins.get(module_name, 0)
        reply = state.reply
        if reply is None or module_name in activated_in_reply(state, reply.reply_id):
            return left  # the reply that woke it does not use up a round
        return left - 1

    def _already_active(self, state: AgentState, module_name: str) -> ActivationOutcome:
        runs = self._runs_after_this(state, module_name)
        next_step = activated_in_this_step(state, module_name)
        return ActivationOutcome(text.already_active_text(module_name, runs, next_step=next_step))

    async def activate(self, state: AgentState, module_name: str, rounds: int) -> ActivationOutcome:
        """Wake a sleeping plugin for `rounds` replies after this one (clamped to 1..20)."""
        found = self._lookup(module_name)
        if isinstance(found, ActivationOutcome):
            return found
        if state.plugins.get(module_name, 0) > 0:
            return self._already_active(state, module_name)
        rounds = clamp_rounds(rounds)
        tools = await found.list_tools(state)  # before any change: a failing source changes nothing
        offered = await self._offered(state, with_fresh=True)
        # a call running concurrently may have woken it while this one was listing tools
        if state.plugins.get(module_name, 0) > 0:
            return self._already_active(state, module_name)
        owners = {t.name: p.module_name for p, _, _, ts in offered for t in ts}
        owners.update((t.name, BUILTIN_MODULE) for t in self._activation_tools)
        clashes = {t.name: owners[t.name] for t in tools if t.name in owners}
        if clashes:
            _log.warning("plugin %r not activated: tool names taken %r", module_name, clashes)
            return ActivationOutcome(text.clash_text(module_name, clashes), is_error=True)
        state.plugins[module_name] = rounds
        mark_activated(state, module_name)
        block = text.render_block(found, "active", tools, rounds_left=rounds)
        return ActivationOutcome(
            text.activated_text(module_name, rounds, block),
            rounds_left=rounds,
            tool_names=tuple(t.name for t in tools),
        )

    def extend(self, state: AgentState, module_name: str, rounds: int) -> ActivationOutcome:
        """Add `rounds` (clamped to 1..20) to an active plugin's replies left, 20 at most."""
        found = self._lookup(module_name)
        if isinstance(found, ActivationOutcome):
            return found
        left = state.plugins.get(module_name, 0)
        if left <= 0:
            return ActivationOutcome(text.extend_sleeping_text(module_name), is_error=True)
        wanted = left + clamp_rounds(rounds)
        state.plugins[module_name] = min(MAX_ACTIVE_ROUNDS, wanted)
        added = state.plugins[module_name] - left
        runs = self._runs_after_this(state, module_name)
        reply = text.extended_text(module_name, added, runs, wanted > MAX_ACTIVE_ROUNDS)
        return ActivationOutcome(reply, rounds_left=state.plugins[module_name])

    async def on_reply_end(self, state: AgentState, reply_id: str) -> list[AgentEvent]:
        """Count the finished reply as one round for every active plugin not woken in it."""
        fresh = activated_in_reply(state, reply_id)
        events: list[AgentEvent] = []
        for module_name in sorted(state.plugins):
            if module_name not in self._plugins:
                continue  # not ours
            if module_name not in self._sleepable or state.plugins[module_name] <= 0:
                # the configuration changed since it woke, or the entry was never a real
                # activation (a hand-edited state): it was not awake, so no PLUGIN_SLEPT
                del state.plugins[module_name]
                continue
            if module_name in fresh:
                continue
            left = state.plugins[module_name] - 1
            if left > 0:
                state.plugins[module_name] = left
            else:
                del state.plugins[module_name]
                events.append(PluginSleptEvent(reply_id=reply_id, module_name=module_name))
        clear_marker(state)
        for plugin in self._plugins.values():
            if plugin.source is not None:
                events.extend(await plugin.source.on_reply_end(state, reply_id))
        return events

    async def aclose(self) -> None:
        """Close the sources wrapped as plugins."""
        for plugin in self._plugins.values():
            if plugin.source is not None:
                await plugin.source.aclose()
