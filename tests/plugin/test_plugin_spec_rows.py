"""Seed rows no other test pins: constants, sleep without injection, what is not a round."""

from __future__ import annotations

from plugin_helpers import Notes, call, results, said, system_prompt, tool_names, weather_plugin

from tether import ScriptedChatModel, Toolkit, UserMsg
from tether.event import (
    ConfirmResult,
    PluginSleptEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
)
from tether.plugin import (
    DEFAULT_ACTIVE_ROUNDS,
    MAX_ACTIVE_ROUNDS,
    ActivatePluginTool,
    ExtendPluginActivationTool,
    PluginScheduler,
)
from tether.state import AgentState
from tether.testing import reply_events, scripted_agent


def test_the_round_constants_are_the_seeds():
    assert (DEFAULT_ACTIVE_ROUNDS, MAX_ACTIVE_ROUNDS) == (3, 20)
    scheduler = PluginScheduler([weather_plugin()])
    for tool in (ActivatePluginTool(scheduler), ExtendPluginActivationTool(scheduler)):
        params = tool.json_schema()["parameters"]
        assert params["required"] == ["module_name"]
        assert params["properties"]["rounds"]["default"] == 3


async def test_a_sleepable_plugin_without_injection_shows_only_its_methods_when_awake():
    model = ScriptedChatModel(
        [said(call("activate_plugin", {"module_name": "weather"})), said("ok")]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[weather_plugin()]))
    events = await reply_events(agent, "weather?")
    block = results(events)["activate_plugin"].split("\n\n", 1)[1]
    assert block.startswith('<plugin name="Weather" module_name="weather" state="active"')
    assert "- get_weather(city): Current weather of a city." in block
    assert "<injected_prompt>" not in block
    prompt = system_prompt(model, 1)
    assert '<plugin name="Weather" module_name="weather" state="active"' in prompt
    assert "<injected_prompt>" not in prompt


async def test_observing_messages_is_not_a_round():
    model = ScriptedChatModel([said("ok")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    agent.state.plugins = {"note": 1}
    await agent.observe(UserMsg("user", "just so you know"))
    assert agent.state.plugins == {"note": 1}
    await reply_events(agent, "hi")
    assert agent.state.plugins == {}


async def test_a_confirmed_call_whose_plugin_fell_asleep_meanwhile_does_not_run():
    # paused while the plugin was always awake; resumed under a configuration where it sleeps
    notes = Notes()
    model = ScriptedChatModel([said(call("delete_note", {"title": "milk"}))])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin(allow_sleep=None)]))
    events = await reply_events(agent, "delete milk")
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    saved = agent.state.model_dump_json()

    model2 = ScriptedChatModel([said("it is asleep")])
    toolkit2 = Toolkit(
        plugins=[notes.plugin(allow_sleep=None)], plugin_strategies={"note": "allow_sleep"}
    )
    agent2 = scripted_agent(
        model=model2, toolkit=toolkit2, state=AgentState.model_validate_json(saved)
    )
    (asked,) = pause.tool_calls
    resume = UserConfirmResultEvent(
        reply_id=pause.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=asked)]
    )
    resumed = [e async for e in agent2.reply_stream(resume)]
    assert "which is asleep, so the call was not run" in results(resumed)["delete_note"]
    assert notes.calls == []
    assert "delete_note" not in tool_names(model2, 0)
    model2.assert_complete()


async def test_interrupting_a_reply_paused_on_a_plugin_tool_in_its_last_run_puts_it_to_sleep():
    notes = Notes()
    model = ScriptedChatModel([said(call("delete_note", {"title": "milk"})), said("asleep")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]))
    agent.state.plugins = {"note": 1}
    events = await reply_events(agent, "delete milk")
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    assert agent.state.plugins == {"note": 1}  # a pause is not the end of the run
    from tether.event import UserInterruptEvent

    stopped = [e async for e in agent.reply_stream(UserInterruptEvent(reply_id=pause.reply_id))]
    assert [e.module_name for e in stopped if isinstance(e, PluginSleptEvent)] == ["note"]
    assert "interrupted" in results(stopped)["delete_note"]
    assert notes.calls == [] and agent.state.plugins == {}
    await reply_events(agent, "next")
    assert "delete_note" not in tool_names(model, 1)
    model.assert_complete()
