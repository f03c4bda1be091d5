"""The seed's tables: allow_sleep tri-state, admin strategies and their priority, bad config."""

from __future__ import annotations

import pytest
from plugin_helpers import BRIEF, Notes, basic_plugin, weather_plugin

from tether import Toolkit
from tether.errors import PluginError
from tether.plugin import Plugin, PluginScheduler, can_sleep
from tether.state import AgentState

# (plugin allow_sleep, sleep_brief, admin strategy) -> sleeps?
TABLE = [
    # allow_sleep tri-state under `auto`
    (None, BRIEF, "auto", False),  # default: always resident
    (False, BRIEF, "auto", False),  # protected
    (True, BRIEF, "auto", True),  # sleeps
    (True, "", "auto", False),  # no brief: same as None
    (True, "   \n ", "auto", False),  # a blank brief is no brief
    # 1. the plugin's allow_sleep=False beats every admin strategy
    (False, BRIEF, "allow_sleep", False),
    (False, BRIEF, "forbid_sleep", False),
    # 2. admin forbid_sleep beats the plugin's allow_sleep=True
    (True, BRIEF, "forbid_sleep", False),
    (None, BRIEF, "forbid_sleep", False),
    # 3. admin allow_sleep makes an undeclared plugin sleep, only with a brief
    (None, BRIEF, "allow_sleep", True),
    (True, BRIEF, "allow_sleep", True),
    (None, "", "allow_sleep", False),
    (True, "", "allow_sleep", False),
]


@pytest.mark.parametrize(("allow_sleep", "brief", "strategy", "sleeps"), TABLE)
def test_can_sleep_follows_the_seed_priority(allow_sleep, brief, strategy, sleeps):
    assert can_sleep(allow_sleep, brief, strategy) is sleeps


@pytest.mark.parametrize(("allow_sleep", "brief", "strategy", "sleeps"), TABLE)
async def test_scheduler_shows_a_plugin_by_its_resolved_strategy(
    allow_sleep, brief, strategy, sleeps
):
    plugin = Notes().plugin(allow_sleep=allow_sleep, sleep_brief=brief)
    scheduler = PluginScheduler([plugin], strategies={"note": strategy})
    state = AgentState()
    names = [t.name for t in await scheduler.list_tools(state)]
    parts = await scheduler.prompt(state)
    assert parts is not None
    prompt = parts.stable + parts.dynamic
    assert scheduler.can_sleep("note") is sleeps
    if sleeps:
        assert scheduler.visibility("note", state) == "sleeping"
        assert names == ["activate_plugin", "extend_plugin_activation"]
        assert BRIEF in prompt and "<plugin name=" not in prompt
        assert plugin.inject is not None and "NOTES-COUNT" not in prompt
    else:
        assert scheduler.visibility("note", state) == "always_awake"
        # nothing can sleep, so the activation tools are not offered either
        assert names == ["add_note", "list_notes", "delete_note"]
        assert 'state="always_awake"' in prompt and "<plugin_catalogue>" not in prompt
        assert "NOTES-COUNT=0" in prompt  # injection runs while awake


def test_protected_plugin_stays_awake_when_admin_allows_sleep():
    scheduler = PluginScheduler(
        [basic_plugin(sleep_brief="Sends messages.")], strategies={"basic": "allow_sleep"}
    )
    assert scheduler.visibility("basic", AgentState()) == "always_awake"


def test_strategies_reach_the_scheduler_through_the_toolkit():
    toolkit = Toolkit(
        plugins=[Notes().plugin(), weather_plugin()], plugin_strategies={"note": "forbid_sleep"}
    )
    (scheduler,) = toolkit.sources
    assert isinstance(scheduler, PluginScheduler)
    assert not scheduler.can_sleep("note")
    assert scheduler.can_sleep("weather")
    assert scheduler.strategies == {"note": "forbid_sleep"}


def test_the_builtin_plugin_accepts_a_strategy_and_never_sleeps():
    scheduler = PluginScheduler([weather_plugin()], strategies={"plugin_activation": "allow_sleep"})
    assert scheduler.visibility("plugin_activation", AgentState()) == "always_awake"


@pytest.mark.parametrize("value", ["sleep", "ALLOW_SLEEP", "", None])
def test_invalid_strategy_value_is_refused(value):
    with pytest.raises(PluginError, match=r"use one of 'auto', 'allow_sleep', 'forbid_sleep'"):
        Toolkit(plugins=[Notes().plugin()], plugin_strategies={"note": value})


def test_strategy_for_an_unknown_plugin_names_the_known_ones():
    with pytest.raises(PluginError, match=r"'notes'.*Did you mean 'note'\?.*Known plugins: note"):
        PluginScheduler([Notes().plugin()], strategies={"notes": "auto"})


def test_strategies_without_plugins_are_refused():
    with pytest.raises(PluginError, match="not the module_name of any plugin"):
        Toolkit(plugin_strategies={"note": "forbid_sleep"})


def test_duplicate_module_names_are_refused():
    with pytest.raises(PluginError, match="two plugins have module_name 'note'"):
        PluginScheduler([Notes().plugin(), Notes().plugin(tools=[])])


def test_reserved_module_name_is_refused():
    with pytest.raises(PluginError, match="reserved"):
        PluginScheduler([weather_plugin(module_name="plugin_activation")])


def test_a_tool_in_two_plugins_is_refused():
    with pytest.raises(PluginError, match="'get_weather' is offered by both plugin 'weather'"):
        PluginScheduler([weather_plugin(), weather_plugin(module_name="weather2")])


def test_a_plugin_tool_named_like_an_activation_tool_is_refused():
    def activate_plugin(module_name: str) -> str:
        return ""

    with pytest.raises(PluginError, match="'activate_plugin' is offered by both"):
        PluginScheduler([weather_plugin(tools=[activate_plugin])])


def test_two_tools_of_one_name_in_a_plugin_are_refused():
    def ping() -> str:
        return ""

    with pytest.raises(PluginError, match="two tools named 'ping'"):
        Plugin("P", "p", "d", tools=[ping, ping])


@pytest.mark.parametrize("module_name", ["", "has space", "1note", "a/b", None])
def test_unusable_module_names_are_refused(module_name):
    with pytest.raises(PluginError, match="module_name"):
        Plugin("P", module_name, "d")


def test_bad_plugin_arguments_are_refused():
    with pytest.raises(PluginError, match="allow_sleep must be None, True or False"):
        Plugin("P", "p", "d", allow_sleep="yes")  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="needs a non-empty `name`"):
        Plugin(" ", "p", "d")
    with pytest.raises(PluginError, match="inject must be a callable"):
        Plugin("P", "p", "d", inject="text")  # type: ignore[arg-type]
    with pytest.raises(PluginError, match="pass `ToolBase` instances or plain functions"):
        Plugin("P", "p", "d", tools=[42])  # type: ignore[list-item]
    with pytest.raises(PluginError, match=r"takes `Plugin` objects.*Plugin.from_source"):
        Toolkit(plugins=[object()])


def test_plain_functions_become_function_tools():
    plugin = weather_plugin()
    (tool,) = plugin.tools
    assert tool.name == "get_weather"
    assert tool.json_schema()["parameters"]["required"] == ["city"]


@pytest.mark.parametrize("strategy", ["auto", "allow_sleep"])
async def test_a_brief_of_none_is_no_brief(strategy):
    # "allow_sleep=True without a sleep_brief": None is how many users write "without"
    plugin = Notes().plugin(sleep_brief=None, description=None, prompt=None)
    scheduler = PluginScheduler([plugin], strategies={"note": strategy})
    assert scheduler.visibility("note", AgentState()) == "always_awake"
    parts = await scheduler.prompt(AgentState())
    assert parts is not None and '<plugin name="Note plugin" module_name="note"' in parts.dynamic


@pytest.mark.parametrize("field", ["sleep_brief", "description", "prompt"])
def test_text_fields_that_are_not_strings_are_refused(field):
    with pytest.raises(PluginError, match=rf"plugin 'note': `{field}` must be a string"):
        Notes().plugin(**{field: 42})
