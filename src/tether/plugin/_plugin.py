"""`Plugin`: a named group of tools with a prompt block, which may sleep between uses."""

from __future__ import annotations

import inspect
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

from tether.errors import PluginError
from tether.tool import FunctionTool, ToolBase, ToolSourceBase

if TYPE_CHECKING:
    from tether.plugin._scheduler import PluginScheduler
    from tether.state import AgentState

__all__ = ["InjectFunc", "Plugin"]

InjectFunc = Callable[["AgentState"], Awaitable[str | None] | str | None]
"""A prompt injection: takes the session's `AgentState`, returns text for the plugin block."""

_MODULE_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.-]*$")


def _text(value: object, field: str, module_name: str) -> str:
    """A text argument: `None` means none given (""), anything else must be a `str`."""
    if value is None:
        return ""
    if not isinstance(value, str):
        raise PluginError(
            f"plugin {module_name!r}: `{field}` must be a string (or None for none), got {value!r}"
        )
    return value


def _as_tool(item: ToolBase | Callable[..., Any], module_name: str) -> ToolBase:
    if isinstance(item, ToolBase):
        return item
    if callable(item):
        return FunctionTool(item)
    raise PluginError(
        f"plugin {module_name!r} was given {item!r} as a tool; pass `ToolBase` instances "
        "or plain functions"
    )


class Plugin:
    """A named group of tools plus a prompt block, shown in full only while awake.

    Pass plugins as `Toolkit(plugins=[...])`. With `allow_sleep=True` and a non-empty
    `sleep_brief` a plugin sleeps until the model wakes it with
    `activate_plugin('<module_name>')`: while asleep the model sees only the brief, none of
    its tools, and `inject` is not called.

    Args:
        name: A display name (e.g. "Note plugin").
        module_name: The unique id the model activates it by (letters, digits, `_.-`).
        description: What the plugin does, shown in its full block.
        tools: `ToolBase`s or plain functions (wrapped in `FunctionTool`).
        prompt: Instructions shown in the full block while the plugin is awake.
        inject: A callable (usually async) taking the `AgentState` and returning text for
            the block; called once per reasoning step while awake, never while asleep.
        allow_sleep: `None` (default): always awake unless an operator allows sleep;
            `False`: never sleeps, whatever the operator says; `True`: sleeps (needs a
            `sleep_brief`).
        sleep_brief: The one or two sentences the model sees while the plugin sleeps: what
            it does and when to activate it. Empty, blank or `None`: no brief, so the
            plugin never sleeps.
        enabled: `False` hides the plugin entirely (no brief, no tools, no activation).
    """

    def __init__(
        self,
        name: str,
        module_name: str,
        description: str | None,
        tools: Iterable[ToolBase | Callable[..., Any]] | None = None,
        prompt: str | None = "",
        inject: InjectFunc | None = None,
        allow_sleep: bool | None = None,
        sleep_brief: str | None = "",
        *,
        enabled: bool = True,
    ) -> None:
        if not isinstance(module_name, str) or not _MODULE_NAME.match(module_name):
            raise PluginError(
                f"plugin module_name {module_name!r} is not usable; use letters, digits, "
                "`_`, `.` or `-`, starting with a letter or `_` (e.g. 'note')"
            )
        if not isinstance(name, str) or not name.strip():
            raise PluginError(f"plugin {module_name!r} needs a non-empty `name`")
        if allow_sleep not in (None, True, False):
            raise PluginError(
                f"plugin {module_name!r}: allow_sleep must be None, True or False, "
                f"got {allow_sleep!r}"
            )
        if inject is not None and not callable(inject):
            raise PluginError(
                f"plugin {module_name!r}: inject must be a callable taking the AgentState, "
                f"got {inject!r}"
            )
        self.name = name
        self.module_name = module_name
        self.description = _text(description, "description", module_name)
        self.tools: list[ToolBase] = [_as_tool(t, module_name) for t in tools or ()]
        self.prompt = _text(prompt, "prompt", module_name)
        self.inject = inject
        self.allow_sleep = allow_sleep
        self.sleep_brief = _text(sleep_brief, "sleep_brief", module_name)
        self.enabled = enabled
        self.source: ToolSourceBase | None = None
        self.tool_prefix: str | None = None
        seen: set[str] = set()
        for t in self.tools:
            if t.name in seen:
                raise PluginError(
                    f"plugin {module_name!r} has two tools named {t.name!r}; rename one "
                    "with `FunctionTool(func, name=...)`"
                )
            seen.add(t.name)

    @classmethod
    def from_source(
        cls,
        source: ToolSourceBase,
        *,
        module_name: str,
        description: str,
        sleep_brief: str = "",
        name: str | None = None,
        prompt: str = "",
        allow_sleep: bool | None = True,
        tool_prefix: str | None = None,
        enabled: bool = True,
    ) -> Plugin:
        """Wrap a tool source (an MCP client, a skill loader) as one sleepable plugin.

        While the plugin sleeps, the source is not asked for its tools or its prompt (so
        a lazy MCP client need not even connect); while awake, its tools are offered and
        its prompt text goes into the plugin's block. The scheduler forwards
        `on_reply_end` and `aclose` to the source.

        Args:
            source: The source to wrap; do not also add it to the toolkit.
            module_name: The id the model activates it by.
            description: What the source offers, shown in the full block.
            sleep_brief: What the model sees while it sleeps; without one it never sleeps.
            name: A display name (default: `source.name`).
            prompt: Extra instructions shown while awake.
            allow_sleep: As for `Plugin` (default `True`: sleep when there is a brief).
            tool_prefix: A prefix all the source's tool names share (e.g.
                `"mcp__github__"`); a call to such a name while the plugin sleeps gets the
                "activate first" answer even before the source has listed its tools.
            enabled: `False` hides the plugin entirely.
        """
        if not isinstance(source, ToolSourceBase):
            raise PluginError(
                f"Plugin.from_source needs a `ToolSourceBase` (an MCP client, a skill loader), "
                f"got {source!r}"
            )
        plugin = cls(
            name=name or source.name,
            module_name=module_name,
            description=description,
            prompt=prompt,
            allow_sleep=allow_sleep,
            sleep_brief=sleep_brief,
            enabled=enabled,
        )
        plugin.source = source
        plugin.tool_prefix = tool_prefix
        return plugin

    @classmethod
    def scheduler_for(
        cls, plugins: Iterable[Plugin], *, strategies: Mapping[str, str] | None = None
    ) -> PluginScheduler:
        """The one tool source that schedules `plugins` (what `Toolkit(plugins=...)` adds).

        Args:
            plugins: The toolkit's plugins.
            strategies: The operator's overrides by module name (`plugin_strategies`).

        Raises:
            PluginError: as `PluginScheduler` does (a non-`Plugin`, a clash, a bad strategy).
        """
        # Same package, one module up: `_scheduler` imports this module at load.
        from tether.plugin._scheduler import PluginScheduler

        return PluginScheduler(plugins, strategies=strategies)

    @property
    def is_dynamic(self) -> bool:
        """Whether the full block depends on the session (an injection or a source)."""
        return self.inject is not None or self.source is not None

    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        """The plugin's tools now (a source is asked each time)."""
        if self.source is not None:
            return list(await self.source.list_tools(state))
        return list(self.tools)

    def owns(self, tool_name: str) -> bool:
        """Whether `tool_name` is known to be one of this plugin's tools without listing them."""
        if any(t.name == tool_name for t in self.tools):
            return True
        return self.tool_prefix is not None and tool_name.startswith(self.tool_prefix)

    async def injected_text(self, state: AgentState) -> str:
        """The text `inject` and a wrapped source's prompt add to the block now."""
        parts: list[str] = []
        if self.source is not None:
            source_parts = await self.source.prompt(state)
            if source_parts is not None:
                parts.extend(p for p in (source_parts.stable, source_parts.dynamic) if p)
        if self.inject is not None:
            result = self.inject(state)
            if inspect.isawaitable(result):
                result = await result
            if result:
                parts.append(str(result))
        return "\n\n".join(parts)

    def __repr__(self) -> str:
        return f"<Plugin {self.module_name!r} name={self.name!r}>"
