"""Rounds: clamping, extend, outcome texts, several activations, counting, save/resume."""

from __future__ import annotations

from typing import Any

import pytest
from plugin_helpers import (
    Notes,
    basic_plugin,
    call,
    results,
    said,
    system_prompt,
    tool_names,
    weather_plugin,
)

from tether import ScriptedChatModel, Toolkit
from tether.event import (
    ConfirmResult,
    PluginActivatedEvent,
    PluginSleptEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import ToolResultState
from tether.plugin import PluginScheduler
from tether.state import AgentState, ReplyCursor
from tether.testing import reply_events, scripted_agent, tool_results


def scheduler(**kwargs: Any) -> PluginScheduler:
    return PluginScheduler([Notes().plugin(), weather_plugin(), basic_plugin()], **kwargs)


async def pause(agent, text: str) -> RequireUserConfirmEvent:
    """Run a turn that must end paused for confirmation; return the pause event."""
    events = await reply_events(agent, text)
    assert isinstance(events[-1], RequireUserConfirmEvent)
    return events[-1]


def in_reply(plugins: dict[str, int] | None = None) -> AgentState:
    """A state with a reply in progress (as when a tool runs inside the loop)."""
    return AgentState(plugins=dict(plugins or {}), reply=ReplyCursor(reply_id="r1", iteration=1))


@pytest.mark.parametrize(
    ("asked", "kept"), [(3, 3), (1, 1), (0, 1), (-7, 1), (20, 20), (21, 20), (999, 20)]
)
async def test_activation_rounds_are_clamped_to_1_to_20(asked, kept):
    state = in_reply()
    outcome = await scheduler().activate(state, "note", asked)
    assert state.plugins == {"note": kept}
    assert outcome.rounds_left == kept and not outcome.is_error
    assert f"activated for the next {kept} run" in outcome.text
    assert f'rounds_left="{kept}"' in outcome.text


async def test_extend_adds_to_an_active_plugin_not_woken_in_this_reply():
    state = in_reply({"note": 2})
    outcome = scheduler().extend(state, "note", 3)
    assert state.plugins == {"note": 5}
    assert outcome.rounds_left == 5
    # 5 left counting this reply: 4 more after it
    assert "extended by 3 run(s): it stays awake for the next 4 run(s) after this one" in (
        outcome.text
    )


@pytest.mark.parametrize(("left", "asked", "after"), [(18, 5, 20), (20, 3, 20), (4, 0, 5)])
async def test_extend_is_capped_at_20_in_all_and_clamps_its_argument(left, asked, after):
    state = in_reply({"note": left})
    outcome = scheduler().extend(state, "note", asked)
    assert state.plugins == {"note": after}
    assert ("capped at 20" in outcome.text) is (left + max(asked, 1) > 20)


async def test_extend_on_a_sleeping_plugin_changes_nothing_and_says_to_activate():
    state = in_reply()
    outcome = scheduler().extend(state, "note", 3)
    assert outcome.is_error and outcome.rounds_left is None
    assert "asleep" in outcome.text and "activate_plugin('note')" in outcome.text
    assert state.plugins == {}


async def test_outcome_texts_for_active_always_awake_unknown_and_disabled():
    s = PluginScheduler(
        [Notes().plugin(), basic_plugin(), weather_plugin(enabled=False)],
    )
    state = in_reply({"note": 2})
    active = await s.activate(state, "note", 5)
    assert "already active, with 1 more run(s)" in active.text
    assert "extend_plugin_activation('note'" in active.text and not active.is_error
    assert state.plugins == {"note": 2}
    for module in ("basic", "plugin_activation"):
        awake = await s.activate(state, module, 3)
        assert "always awake and needs no activation" in awake.text and not awake.is_error
        assert "always awake" in s.extend(state, module, 3).text
    unknown = await s.activate(state, "notes", 3)
    assert unknown.is_error
    assert "no plugin `notes`. Did you mean 'note'? Plugins you can activate: note." in (
        unknown.text
    )
    disabled = await s.activate(state, "weather", 3)
    assert disabled.is_error and "disabled" in disabled.text
    assert s.extend(state, "weather", 3).is_error
    assert state.plugins == {"note": 2}


async def test_two_activations_in_one_reply_wake_both_for_the_next_step():
    model = ScriptedChatModel(
        [
            said(
                call("activate_plugin", {"module_name": "note"}),
                call("activate_plugin", {"module_name": "weather", "rounds": 5}),
            ),
            said("done"),
        ]
    )
    agent = scripted_agent(
        model=model, toolkit=Toolkit(plugins=[Notes().plugin(), weather_plugin()])
    )
    events = await reply_events(agent, "note the weather")
    assert "add_note" not in tool_names(model, 0) and "get_weather" not in tool_names(model, 0)
    assert {"add_note", "get_weather"} <= set(tool_names(model, 1))
    prompt = system_prompt(model, 1)
    assert 'module_name="note" state="active" rounds_left="3"' in prompt
    assert 'module_name="weather" state="active" rounds_left="5"' in prompt
    activated = [
        (e.module_name, e.rounds_left) for e in events if isinstance(e, PluginActivatedEvent)
    ]
    assert sorted(activated) == [("note", 3), ("weather", 5)]
    # the reply that woke them does not use up a round
    assert agent.state.plugins == {"note": 3, "weather": 5}
    model.assert_complete()


async def test_a_reply_with_no_active_plugins_changes_nothing():
    model = ScriptedChatModel([said("hi")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    events = await reply_events(agent, "hello")
    assert not any(isinstance(e, PluginActivatedEvent | PluginSleptEvent) for e in events)
    assert agent.state.plugins == {}
    assert agent.state.tool_state == {}


async def test_each_reply_counts_once_and_the_hint_comes_on_the_last():
    model = ScriptedChatModel([said(call("activate_plugin", {"module_name": "note", "rounds": 2}))])
    model.responses += [said("ok")] * 4
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    await reply_events(agent, "wake notes")
    assert agent.state.plugins == {"note": 2}
    assert "Last visible run" not in system_prompt(model, 1)  # the waking reply: 2 more to go
    await reply_events(agent, "one")
    assert agent.state.plugins == {"note": 1}
    assert 'rounds_left="2"' in system_prompt(model, 2)
    assert "Last visible run" not in system_prompt(model, 2)
    events = await reply_events(agent, "two")
    assert 'rounds_left="1"' in system_prompt(model, 3)
    assert (
        "Last visible run. Call extend_plugin_activation('note') now if you still need it "
        "next run." in system_prompt(model, 3)
    )
    slept = [e for e in events if isinstance(e, PluginSleptEvent)]
    assert [e.module_name for e in slept] == ["note"]
    assert slept[0].reply_id == events[0].reply_id
    assert agent.state.plugins == {}
    await reply_events(agent, "three")
    assert "add_note" not in tool_names(model, 4)
    model.assert_complete()


async def test_extending_in_the_last_run_keeps_it_awake():
    model = ScriptedChatModel(
        [
            said(call("extend_plugin_activation", {"module_name": "note", "rounds": 2})),
            said("extended"),
            said("a"),
            said("b"),
            said("c"),
        ]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    agent.state.plugins = {"note": 1}
    events = await reply_events(agent, "keep notes")
    assert "Last visible run" in system_prompt(model, 0)
    assert "Last visible run" not in system_prompt(model, 1)  # 3 left now
    assert [
        (e.module_name, e.rounds_left) for e in events if isinstance(e, PluginActivatedEvent)
    ] == [("note", 3)]
    assert agent.state.plugins == {"note": 2}
    await reply_events(agent, "1")
    await reply_events(agent, "2")
    assert "Last visible run" in system_prompt(model, 3)
    await reply_events(agent, "3")
    assert "add_note" not in tool_names(model, 4)


async def test_extend_on_a_sleeping_plugin_through_the_loop_is_an_error_result():
    model = ScriptedChatModel(
        [said(call("extend_plugin_activation", {"module_name": "note"})), said("ok")]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    events = await reply_events(agent, "x")
    (result,) = tool_results(events)
    assert result.state is ToolResultState.ERROR
    assert "activate_plugin('note')" in result.get_text()
    assert agent.state.plugins == {}
    assert not any(isinstance(e, PluginActivatedEvent) for e in events)


async def test_state_survives_a_json_round_trip_between_replies():
    notes = Notes()
    model = ScriptedChatModel([said(call("activate_plugin", {"module_name": "note"})), said("ok")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]))
    await reply_events(agent, "wake")
    saved = agent.state.model_dump_json()

    # another process: a fresh toolkit and model, the state loaded from JSON
    model2 = ScriptedChatModel([said(call("add_note", {"title": "t", "content": "c"})), said("ok")])
    model2.responses += [said("x"), said("y"), said("z")]
    agent2 = scripted_agent(
        model=model2,
        toolkit=Toolkit(plugins=[notes.plugin()]),
        state=AgentState.model_validate_json(saved),
    )
    assert agent2.state.plugins == {"note": 3}
    events = await reply_events(agent2, "add a note")
    assert results(events)["add_note"] == "saved t"
    assert 'rounds_left="3"' in system_prompt(model2, 0)
    for word in ("a", "b"):
        agent2.state = AgentState.model_validate_json(agent2.state.model_dump_json())
        await reply_events(agent2, word)
    assert "Last visible run" in system_prompt(model2, 3)
    assert agent2.state.plugins == {}
    agent2.state = AgentState.model_validate_json(agent2.state.model_dump_json())
    await reply_events(agent2, "c")
    assert "add_note" not in tool_names(model2, 4)
    model2.assert_complete()


async def test_a_paused_and_resumed_reply_is_one_round_even_across_processes():
    notes = Notes()
    model = ScriptedChatModel(
        [
            said(call("activate_plugin", {"module_name": "note"})),
            said(call("delete_note", {"title": "milk"})),
        ]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]))
    event = await pause(agent, "delete milk")
    saved = agent.state.model_dump_json()

    model2 = ScriptedChatModel([said("deleted"), said("ok")])
    agent2 = scripted_agent(
        model=model2,
        toolkit=Toolkit(plugins=[notes.plugin()]),
        state=AgentState.model_validate_json(saved),
    )
    (asked,) = event.tool_calls
    resume = UserConfirmResultEvent(
        reply_id=event.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=asked)]
    )
    await agent2.reply(resume)
    assert notes.calls == ["delete_note"]
    assert "delete_note" in tool_names(model2, 0)
    # the waking reply (paused and resumed) did not use up a round
    assert agent2.state.plugins == {"note": 3}
    assert "plugin_activation" not in agent2.state.tool_state
    await reply_events(agent2, "next")
    assert agent2.state.plugins == {"note": 2}


async def test_a_reply_that_pauses_counts_one_round_only_when_it_ends():
    model = ScriptedChatModel([said(call("delete_note", {"title": "a"})), said("ok")])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    agent.state.plugins = {"note": 2}
    event = await pause(agent, "delete a")
    assert agent.state.plugins == {"note": 2}  # paused: not counted yet
    (asked,) = event.tool_calls
    await agent.reply(
        UserConfirmResultEvent(
            reply_id=event.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=asked)],
        )
    )
    assert agent.state.plugins == {"note": 1}


async def test_an_interrupted_reply_still_counts_as_a_round():
    model = ScriptedChatModel([said(call("delete_note", {"title": "a"}))])
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[Notes().plugin()]))
    agent.state.plugins = {"note": 1}
    event = await pause(agent, "delete a")
    events = [e async for e in agent.reply_stream(UserInterruptEvent(reply_id=event.reply_id))]
    assert [e.module_name for e in events if isinstance(e, PluginSleptEvent)] == ["note"]
    assert agent.state.plugins == {}


async def test_sessions_sharing_a_toolkit_keep_their_own_activations():
    toolkit = Toolkit(plugins=[Notes().plugin()])
    model_a = ScriptedChatModel([said(call("activate_plugin", {"module_name": "note"})), said("a")])
    model_b = ScriptedChatModel([said("b")])
    agent_a = scripted_agent(model=model_a, toolkit=toolkit)
    agent_b = scripted_agent(model=model_b, toolkit=toolkit)
    await reply_events(agent_a, "wake")
    await reply_events(agent_b, "hello")
    assert agent_a.state.plugins == {"note": 3}
    assert agent_b.state.plugins == {}
    assert "add_note" not in tool_names(model_b, 0)


async def test_entries_of_plugins_that_can_no_longer_sleep_are_dropped_at_reply_end():
    s = PluginScheduler([Notes().plugin()], strategies={"note": "forbid_sleep"})
    state = AgentState(plugins={"note": 4, "someone_elses": 2})
    assert await s.on_reply_end(state, "r") == []
    assert state.plugins == {"someone_elses": 2}  # a module it does not know is left alone


async def test_one_round_means_the_next_reply_only_and_it_carries_the_hint():
    s = scheduler()
    state = in_reply()
    await s.activate(state, "note", 1)
    parts = await s.prompt(state)
    assert parts is not None and 'rounds_left="1"' in parts.dynamic
    assert "Last visible run" not in parts.dynamic  # the waking reply: one more to come
    assert await s.on_reply_end(state, "r1") == []
    state.reply = ReplyCursor(reply_id="r2")
    parts = await s.prompt(state)
    assert parts is not None and "Last visible run" in parts.dynamic
    (slept,) = await s.on_reply_end(state, "r2")
    assert isinstance(slept, PluginSleptEvent) and slept.module_name == "note"
    assert state.plugins == {} and state.tool_state == {}
