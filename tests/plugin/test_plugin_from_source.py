"""`Plugin.from_source`: any tool source (MCP client, skill loader) as one sleepable plugin."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_helpers import call, results, said, system_prompt, tool_names

from tether import ScriptedChatModel, Toolkit
from tether.errors import PluginError
from tether.event import AgentEvent, CustomEvent, PluginActivatedEvent
from tether.plugin import Plugin, PluginScheduler
from tether.state import AgentState
from tether.testing import reply_events, scripted_agent
from tether.tool import FunctionTool, PromptParts, ToolBase, ToolSourceBase


class FakeServer(ToolSourceBase):
    """A stand-in for an MCP client: counts what the scheduler asks of it."""

    name = "fake"

    def __init__(self, *, fail_listing: bool = False) -> None:
        self.listed = 0
        self.prompted = 0
        self.ended: list[str] = []
        self.closed = False
        self.fail_listing = fail_listing
        self.ran: list[str] = []

        def fake__search(query: str) -> str:
            """Search the fake server."""
            self.ran.append(query)
            return f"found {query}"

        self._tools: list[ToolBase] = [FunctionTool(fake__search)]

    async def list_tools(self, state: Any) -> list[ToolBase]:
        self.listed += 1
        if self.fail_listing:
            raise ConnectionError("fake server is down")
        return list(self._tools)

    async def prompt(self, state: Any) -> PromptParts | None:
        self.prompted += 1
        return PromptParts(stable="FAKE-SERVER-GUIDE", dynamic="FAKE-LIVE")

    def unavailable_hint(self, tool_name: str, state: Any) -> str | None:
        return "fake server: that tool was removed" if tool_name == "fake__old" else None

    async def on_reply_end(self, state: Any, reply_id: str) -> list[AgentEvent]:
        self.ended.append(reply_id)
        return [CustomEvent(reply_id=reply_id, name="fake-ended")]

    async def aclose(self) -> None:
        self.closed = True


def fake_plugin(server: FakeServer, **kwargs: Any) -> Plugin:
    options: dict[str, Any] = {
        "module_name": "fake",
        "description": "A fake search server",
        "sleep_brief": "Searches the fake corpus; activate when the user asks to search it.",
        "tool_prefix": "fake__",
    }
    options.update(kwargs)
    return Plugin.from_source(server, **options)


async def test_a_sleeping_source_is_not_even_asked_for_its_tools():
    server = FakeServer()
    scheduler = PluginScheduler([fake_plugin(server)])
    state = AgentState()
    assert [t.name for t in await scheduler.list_tools(state)] == [
        "activate_plugin",
        "extend_plugin_activation",
    ]
    parts = await scheduler.prompt(state)
    assert parts is not None and "Searches the fake corpus" in parts.stable
    assert "FAKE-SERVER-GUIDE" not in parts.stable + parts.dynamic
    assert server.listed == 0 and server.prompted == 0


async def test_an_activated_source_offers_its_tools_and_prompt_from_the_next_step():
    server = FakeServer()
    model = ScriptedChatModel(
        [
            said(call("activate_plugin", {"module_name": "fake"})),
            said(call("fake__search", {"query": "cats"})),
            said("found cats"),
        ]
    )
    agent = scripted_agent(
        model=model, toolkit=Toolkit(plugins=[fake_plugin(server, name="Fake MCP")])
    )
    events = await reply_events(agent, "search cats")
    assert "fake__search" not in tool_names(model, 0)
    assert "fake__search" in tool_names(model, 1)
    prompt = system_prompt(model, 1)
    assert '<plugin name="Fake MCP" module_name="fake" state="active" rounds_left="3">' in prompt
    assert "FAKE-SERVER-GUIDE" in prompt and "FAKE-LIVE" in prompt
    assert "- fake__search(query): Search the fake server." in results(events)["activate_plugin"]
    assert server.ran == ["cats"]
    # the wrapped source still hears about reply ends, and its events reach the stream
    assert server.ended == [events[0].reply_id]
    assert [e.name for e in events if isinstance(e, CustomEvent)] == ["fake-ended"]


async def test_a_call_to_a_sleeping_sources_tool_is_refused_by_prefix():
    server = FakeServer()
    model = ScriptedChatModel([said(call("fake__search", {"query": "x"})), said("ok")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[fake_plugin(server)]))
    events = await reply_events(agent, "search")
    assert "Call activate_plugin('fake') first" in results(events)["fake__search"]
    assert server.ran == [] and server.listed == 0


async def test_an_awake_source_gives_its_own_hints():
    server = FakeServer()
    scheduler = PluginScheduler([fake_plugin(server)])
    awake = AgentState(plugins={"fake": 2})
    assert scheduler.unavailable_hint("fake__old", awake) == "fake server: that tool was removed"
    assert scheduler.unavailable_hint("unrelated", awake) is None


async def test_a_source_that_fails_to_list_leaves_the_plugin_asleep():
    server = FakeServer(fail_listing=True)
    model = ScriptedChatModel([said(call("activate_plugin", {"module_name": "fake"})), said("ok")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[fake_plugin(server)]))
    events = await reply_events(agent, "search")
    assert "ConnectionError: fake server is down" in results(events)["activate_plugin"]
    assert not any(isinstance(e, PluginActivatedEvent) for e in events)
    assert agent.state.plugins == {}


async def test_a_source_without_a_brief_is_always_awake():
    server = FakeServer()
    scheduler = PluginScheduler([fake_plugin(server, sleep_brief="")])
    assert [t.name for t in await scheduler.list_tools(AgentState())] == ["fake__search"]
    assert scheduler.visibility("fake", AgentState()) == "always_awake"


async def test_closing_the_toolkit_closes_wrapped_sources():
    server = FakeServer()
    async with Toolkit(plugins=[fake_plugin(server)]):
        pass
    assert server.closed


def test_from_source_refuses_what_is_not_a_source():
    with pytest.raises(PluginError, match="needs a `ToolSourceBase`"):
        Plugin.from_source(object(), module_name="x", description="d")  # type: ignore[arg-type]


def test_from_source_defaults_the_name_to_the_sources():
    plugin = fake_plugin(FakeServer())
    assert plugin.name == "fake" and plugin.allow_sleep is True and plugin.is_dynamic
    assert plugin.owns("fake__anything") and not plugin.owns("other")
