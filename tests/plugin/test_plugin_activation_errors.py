"""Bad and odd activations: unknown ids, twice, races, clashing tool names, stray state."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from plugin_helpers import Notes, call, said, tool_names, weather_plugin
from test_plugin_from_source import FakeServer, fake_plugin

from tether import ScriptedChatModel, Toolkit
from tether.event import AgentEvent, PluginActivatedEvent, PluginSleptEvent
from tether.message import ToolResultState
from tether.plugin import PluginScheduler
from tether.state import AgentState
from tether.testing import reply_events, scripted_agent, tool_results


def activated(events: list[AgentEvent]) -> list[tuple[str, int]]:
    return [(e.module_name, e.rounds_left) for e in events if isinstance(e, PluginActivatedEvent)]


class YieldingServer(FakeServer):
    """A source whose listing really suspends (as an MCP round trip does)."""

    async def list_tools(self, state: Any) -> list[Any]:
        await asyncio.sleep(0)  # a suspension point, not a wait for time
        return await super().list_tools(state)


async def test_activating_an_unknown_plugin_is_an_error_result_and_changes_nothing():
    model = ScriptedChatModel(
        [
            said(
                call("activate_plugin", {"module_name": "calendar"}),
                call("activate_plugin", {"module_name": ""}),
                call("extend_plugin_activation", {"module_name": "calendar"}),
            ),
            said("no such plugin"),
        ]
    )
    agent = scripted_agent(
        model=model, toolkit=Toolkit(plugins=[Notes().plugin(), weather_plugin()])
    )
    events = await reply_events(agent, "book a meeting")
    first, empty, extend = tool_results(events)
    for result in (first, empty, extend):
        assert result.state is ToolResultState.ERROR
        assert "Plugins you can activate: note, weather." in result.get_text()
    assert "there is no plugin `calendar`" in first.get_text()
    assert activated(events) == []
    assert agent.state.plugins == {}
    assert "plugin_activation" not in agent.state.tool_state
    model.assert_complete()


async def test_an_unknown_id_that_is_a_display_name_points_to_the_module_name():
    # the seed's own sample: name="笔记插件", module_name="note"
    model = ScriptedChatModel([said(call("activate_plugin", {"module_name": "笔记插件"}))])
    model.responses.append(said("ok"))
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin(name="笔记插件")]))
    (result,) = tool_results(await reply_events(agent, "记一下"))
    assert result.state is ToolResultState.ERROR
    assert "Did you mean 'note'?" in result.get_text()
    assert agent.state.plugins == {}


async def test_activating_twice_in_one_step_wakes_once_and_says_the_tools_come_next_step():
    notes = Notes()
    model = ScriptedChatModel(
        [
            said(
                call("activate_plugin", {"module_name": "note"}),
                call("activate_plugin", {"module_name": "note", "rounds": 7}),
            ),
            said(call("activate_plugin", {"module_name": "note"})),
            said("ready"),
            said(call("activate_plugin", {"module_name": "note", "rounds": 9})),
            said("still"),
        ]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]))
    events = await reply_events(agent, "wake notes")
    woke, again_same_step, again_next_step = tool_results(events)
    assert woke.get_text().startswith("Plugin `note` is now activated for the next 3 runs.")
    # the second call in the step that woke it: the tools are not callable until the next step
    text = again_same_step.get_text()
    assert again_same_step.state is ToolResultState.SUCCESS
    assert "already active, with 3 more run(s) after this one" in text
    assert "available now" not in text and "from your next step" in text
    # in the next step of the same reply they are
    assert "with 3 more run(s) after this one; its tools are available now" in (
        again_next_step.get_text()
    )
    assert activated(events) == [("note", 3)]
    assert agent.state.plugins == {"note": 3}
    # a later reply: the rounds left are reported and neither reset nor extended
    (later,) = tool_results(await reply_events(agent, "and now?"))
    assert "with 2 more run(s) after this one" in later.get_text()
    assert agent.state.plugins == {"note": 2}
    model.assert_complete()


async def test_two_concurrent_activations_of_a_suspending_source_wake_it_once():
    server = YieldingServer()
    model = ScriptedChatModel(
        [
            said(
                call("activate_plugin", {"module_name": "fake"}),
                call("activate_plugin", {"module_name": "fake", "rounds": 9}),
            ),
            said("ok"),
        ]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[fake_plugin(server)]))
    events = await reply_events(agent, "search")
    first, second = tool_results(events)
    assert first.get_text().startswith("Plugin `fake` is now activated for the next 3 runs.")
    assert "already active" in second.get_text()
    assert activated(events) == [("fake", 3)]
    assert agent.state.plugins == {"fake": 3}


async def test_a_plugin_whose_tool_name_an_awake_plugin_has_is_not_woken():
    # two sources offering the same tool name are only found out once both are listed
    model = ScriptedChatModel(
        [
            said(call("activate_plugin", {"module_name": "fake"})),
            said(call("activate_plugin", {"module_name": "fake2"})),
            said(call("fake__search", {"query": "q"})),
            said("done"),
        ]
    )
    one, two = FakeServer(), FakeServer()
    plugins = [fake_plugin(one), fake_plugin(two, module_name="fake2")]
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=plugins))
    events = await reply_events(agent, "search both")
    _, refused, searched = tool_results(events)
    assert refused.state is ToolResultState.ERROR
    assert "`fake2` was not activated" in refused.get_text()
    assert "`fake__search`" in refused.get_text() and "`fake`" in refused.get_text()
    assert searched.get_text() == "found q" and one.ran == ["q"] and two.ran == []
    assert activated(events) == [("fake", 3)]
    assert agent.state.plugins == {"fake": 3}
    assert tool_names(model, 3).count("fake__search") == 1
    model.assert_complete()


async def test_two_awake_sources_that_come_to_share_a_tool_name_do_not_break_the_reply():
    # e.g. both were activated under another configuration, or a server added a tool later
    one, two = FakeServer(), FakeServer()
    scheduler = PluginScheduler([fake_plugin(one), fake_plugin(two, module_name="fake2")])
    state = AgentState(plugins={"fake": 2, "fake2": 2})
    names = [t.name for t in await scheduler.list_tools(state)]
    assert names.count("fake__search") == 1
    parts = await scheduler.prompt(state)
    assert parts is not None
    block = parts.dynamic.split('module_name="fake2"', 1)[1]
    assert "fake__search" not in block  # the block lists only what it really offers

    model = ScriptedChatModel([said("fine")])
    toolkit = Toolkit(
        plugins=[fake_plugin(FakeServer()), fake_plugin(FakeServer(), module_name="fake2")]
    )
    agent = scripted_agent(
        model=model, toolkit=toolkit, state=AgentState(plugins={"fake": 2, "fake2": 2})
    )
    await reply_events(agent, "hi")
    assert agent.state.plugins == {"fake": 1, "fake2": 1}


async def test_entries_that_are_not_positive_are_dropped_without_a_slept_event():
    # a hand-edited or foreign state: no plugin was awake, so none "went to sleep"
    scheduler = PluginScheduler([Notes().plugin(), weather_plugin()])
    state = AgentState(plugins={"note": 0, "weather": -2})
    assert scheduler.visibility("note", state) == "sleeping"
    assert await scheduler.on_reply_end(state, "r") == []
    assert state.plugins == {}


async def test_a_reply_that_ends_with_an_expired_plugin_still_reports_it_slept():
    scheduler = PluginScheduler([Notes().plugin()])
    state = AgentState(plugins={"note": 1})
    (event,) = await scheduler.on_reply_end(state, "r")
    assert isinstance(event, PluginSleptEvent) and event.module_name == "note"


def test_a_plain_tool_named_like_a_plugin_tool_is_refused_when_the_toolkit_is_built() -> None:
    from tether.errors import DuplicateToolError
    from tether.plugin import Plugin

    def add_note(text: str) -> str:
        """Add a note."""
        return text

    def activate_plugin(module_name: str) -> str:
        """A local tool that takes the scheduler's name."""
        return module_name

    note = Plugin(
        name="Notes",
        module_name="note",
        description="Manage notes.",
        tools=[add_note],
        allow_sleep=True,
        sleep_brief="Notes: activate to manage them.",
    )
    with pytest.raises(DuplicateToolError, match="'add_note' is also offered by a plugin"):
        Toolkit(tools=[add_note], plugins=[note])
    with pytest.raises(DuplicateToolError, match="'activate_plugin'"):
        Toolkit(tools=[activate_plugin], plugins=[note])
    toolkit = Toolkit(plugins=[note])
    with pytest.raises(DuplicateToolError, match="'add_note'"):
        toolkit.register(add_note)
