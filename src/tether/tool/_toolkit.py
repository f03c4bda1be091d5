"""`Toolkit`: the tools an agent may use, and the per-step view the loop works from."""

from __future__ import annotations

import copy
import difflib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tether import _lazy
from tether.errors import ConfigError, DuplicateToolError, PluginError
from tether.tool._base import ToolBase
from tether.tool._function import FunctionTool
from tether.tool._source import ToolSourceBase
from tether.tool._validate import check_iterable

if TYPE_CHECKING:
    from tether.plugin import Plugin, PluginScheduler
    from tether.state import AgentState

__all__ = ["Toolkit", "ToolkitView"]


@dataclass(slots=True)
class ToolkitView:
    """The tools and prompt text of one reasoning step (derived from the session state)."""

    tools: dict[str, ToolBase]
    """Callable tools by name."""
    schemas: list[dict[str, Any]]
    """Their JSON schemas, in a stable order."""
    prompt: str = ""
    """Text the sources add to the system prompt (stable parts first)."""
    sources: Sequence[ToolSourceBase] = field(default_factory=tuple)
    """The sources the view was built from."""
    dynamic_prompt: str = ""
    """The part of `prompt` that may change at every step (it ends `prompt`)."""
    stable_schemas: list[dict[str, Any]] | None = None
    """The tool list for providers that cache prompts: fixed between steps (see
    `ChatRequest.stable_tools`); `None`: `schemas`."""
    dynamic_tail: str | None = None
    """What caching providers send last instead of `dynamic_prompt` (see
    `ChatRequest.volatile_tail`); `None`: `dynamic_prompt`."""

    def unknown_tool_message(self, name: str, state: AgentState) -> str:
        """An error text for a call to a tool that is not callable now."""
        for source in self.sources:
            hint = source.unavailable_hint(name, state)
            if hint:
                return hint
        names = sorted(self.tools)
        close = difflib.get_close_matches(name, names, n=1)
        did_you_mean = f" Did you mean {close[0]!r}?" if close else ""
        available = ", ".join(names) if names else "(none)"
        return (
            f"Error: there is no tool named {name!r}.{did_you_mean} Available tools: {available}."
        )


class Toolkit:
    """The tools an agent may use: plain tools plus MCP servers, skills and plugins.

    A toolkit is configuration: it is never changed by a reply, so several agents and
    sessions may share one. What is callable at a given step (plugins asleep or awake,
    skills changed on disk) is derived from the session state by `view`.
    """

    def __init__(
        self,
        tools: Iterable[ToolBase | Callable[..., Any]] | None = None,
        mcps: Iterable[ToolSourceBase] | None = None,
        skills_or_loaders: Iterable[str | Path | ToolSourceBase] | None = None,
        plugins: Iterable[Plugin] | None = None,
        *,
        plugin_strategies: Mapping[str, str] | None = None,
    ) -> None:
        check_iterable("tools", tools, "my_tool, ...")
        check_iterable("mcps", mcps, "MCPClient(...), ...")
        check_iterable("skills_or_loaders", skills_or_loaders, "'skills/', ...")
        check_iterable("plugins", plugins, "Plugin(...), ...")
        self._tools: dict[str, ToolBase] = {}
        self._reserved: frozenset[str] = frozenset()  # plugins' tools, offered when awake
        for t in tools or ():
            self.register(t)
        self._sources: list[ToolSourceBase] = []
        for mcp in mcps or ():
            self.add_source(mcp)
        for source in _skill_sources(list(skills_or_loaders or ())):
            self.add_source(source)
        plugin_list = list(plugins or ())
        if plugin_list:
            scheduler = _plugin_scheduler(plugin_list, plugin_strategies)
            self._reserved = scheduler.known_tool_names
            for name in self._tools:
                self._check_free(name)
            self.add_source(scheduler)
        elif plugin_strategies:
            raise PluginError(
                f"plugin_strategies names {next(iter(plugin_strategies))!r}, which is not the "
                "module_name of any plugin in this toolkit (it has none); pass the plugins "
                "with `Toolkit(plugins=[...], plugin_strategies={...})`"
            )
        self._static_view: ToolkitView | None = None

    def register(self, tool: ToolBase | Callable[..., Any]) -> None:
        """Add a tool (a `ToolBase`, or a function that becomes a `FunctionTool`)."""
        if not isinstance(tool, ToolBase):
            if not callable(tool):
                raise ConfigError(f"a toolkit takes tools or functions, got {tool!r}")
            tool = FunctionTool(tool)
        if tool.name in self._tools:
            raise DuplicateToolError(
                f"two tools are named {tool.name!r}; give one another name with "
                "`FunctionTool(func, name=...)`"
            )
        self._check_free(tool.name)
        self._tools[tool.name] = tool
        self._static_view = None

    def _check_free(self, name: str) -> None:
        # Found now rather than when the plugin wakes, which would break every later step.
        if name in self._reserved:
            raise DuplicateToolError(
                f"tool {name!r} is also offered by a plugin (when it is awake); give one "
                "another name with `FunctionTool(func, name=...)`"
            )

    def add_source(self, source: ToolSourceBase) -> None:
        """Add a source of tools (an MCP client, a skill loader, a plugin scheduler)."""
        if not isinstance(source, ToolSourceBase):
            raise ConfigError(
                f"{source!r} is not a tool source; pass an `MCPClient`, a skill loader "
                "or a folder path"
            )
        self._sources.append(source)

    def with_sources(self, *sources: ToolSourceBase) -> Toolkit:
        """A toolkit with this one's tools and sources plus `sources` (this one unchanged)."""
        extended = copy.copy(self)
        extended._sources = [*self._sources]
        for source in sources:
            extended.add_source(source)
        extended._static_view = None
        return extended

    def with_sources_mapped(self, change: Callable[[ToolSourceBase], ToolSourceBase]) -> Toolkit:
        """A toolkit with this one's tools and each source replaced by `change(source)`."""
        mapped = copy.copy(self)
        mapped._sources = [change(source) for source in self._sources]
        mapped._static_view = None
        return mapped

    @property
    def tools(self) -> dict[str, ToolBase]:
        """The plain tools, by name (sources' tools are listed by `view`)."""
        return dict(self._tools)

    @property
    def sources(self) -> list[ToolSourceBase]:
        """The tool sources (MCP clients, skill loaders, plugin scheduler)."""
        return list(self._sources)

    async def view(self, state: AgentState, *, with_prompt: bool = True) -> ToolkitView:
        """The tools and prompt text for one step of the session `state`.

        `with_prompt=False` skips the sources' prompt text (and plugin injections): the
        acting step only needs the tools.
        """
        if not self._sources:
            if self._static_view is None:
                self._static_view = ToolkitView(
                    tools=dict(self._tools),
                    schemas=[t.json_schema() for t in self._tools.values()],
                )
            return self._static_view
        tools = dict(self._tools)
        stable: list[str] = []
        dynamic: list[str] = []
        tails: list[str] = []
        shortened = False
        stable_schemas = [t.json_schema() for t in self._tools.values()] if with_prompt else None
        for source in self._sources:
            offered = await source.list_tools(state)
            for t in offered:
                if t.name in tools:
                    raise DuplicateToolError(
                        f"tool {t.name!r} from {source.name!r} clashes with another tool "
                        "of the same name; rename one or disable it in its source"
                    )
                tools[t.name] = t
            if stable_schemas is not None:
                stable_schemas.extend(source.stable_schemas(offered) or ())
            parts = await source.prompt(state) if with_prompt else None
            if parts is not None:
                if parts.stable:
                    stable.append(parts.stable)
                if parts.dynamic:
                    dynamic.append(parts.dynamic)
                tail = parts.dynamic if parts.dynamic_tail is None else parts.dynamic_tail
                shortened = shortened or parts.dynamic_tail is not None
                if tail:
                    tails.append(tail)
        return ToolkitView(
            tools=tools,
            schemas=[t.json_schema() for t in tools.values()],
            prompt="\n\n".join(stable + dynamic),
            sources=tuple(self._sources),
            dynamic_prompt="\n\n".join(dynamic),
            stable_schemas=stable_schemas,
            dynamic_tail="\n\n".join(tails) if shortened else None,
        )

    async def aclose(self) -> None:
        """Close every source (MCP sessions, processes)."""
        for source in self._sources:
            await source.aclose()

    async def __aenter__(self) -> Toolkit:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


def _plugin_scheduler(
    plugins: list[Plugin], strategies: Mapping[str, str] | None
) -> PluginScheduler:
    """The one source for all the plugins, built by their own class (`Plugin.scheduler_for`).

    Plugins sit above `tool/`: the toolkit asks the objects it is given for their source
    rather than importing the scheduler.
    """
    try:
        build = type(plugins[0]).scheduler_for
    except AttributeError:
        raise PluginError(
            f"`Toolkit(plugins=...)` takes `Plugin` objects, got {plugins[0]!r}; wrap an MCP "
            "client or skill loader with `Plugin.from_source(...)`"
        ) from None
    return build(plugins, strategies=strategies)


FOLDER_LOADER_HOME = "tether.skill"
"""Where the loader of skill folders given as paths lives (`LocalSkillLoader`).

Skills sit above `tool/`, which never imports them: the loader is named here and loaded
by name on first use (`tether._lazy`, as `tether.model` loads providers), so the seed's
`Toolkit(skills_or_loaders=["skills/"])` works with no import edge from `tool` to `skill`.
"""


def _skill_sources(items: list[str | Path | ToolSourceBase]) -> list[ToolSourceBase]:
    """The loaders; every folder path goes to one loader, where the first path stood."""
    folders = [item for item in items if isinstance(item, str | Path)]
    sources: list[ToolSourceBase] = []
    placed = False
    for item in items:
        if not isinstance(item, str | Path):
            sources.append(item)  # `add_source` says it if this is not a tool source
        elif not placed:
            loader: Callable[[list[str | Path]], ToolSourceBase] = _lazy.load(
                "tether.tool", "LocalSkillLoader", FOLDER_LOADER_HOME
            )
            sources.append(loader(folders))
            placed = True
    return sources
