"""Whole conversations: the seed's note plugin, sleeping tools never run, injection, caching."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

from plugin_helpers import (
    BRIEF,
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
    PluginActivatedEvent,
    PluginSleptEvent,
    ReplyEndEvent,
)
from tether.message import ToolResultState
from tether.plugin import Plugin, PluginScheduler
from tether.state import AgentState
from tether.testing import reply_events, scripted_agent, tool_results

EXAMPLE = Path(__file__).parents[2] / "examples" / "agentscope_compat" / "seed_plugin.py"
ACTIVATION = ["activate_plugin", "extend_plugin_activation"]
NOTE_TOOLS = ["add_note", "list_notes"]


def load_example() -> Any:
    spec = importlib.util.spec_from_file_location("seed_plugin_example", EXAMPLE)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


async def test_seed_note_plugin_sleeps_wakes_for_three_replies_and_sleeps_again():
    example = load_example()
    agent, model, events = await example.run_conversation()
    names = [tool_names(model, i) for i in range(len(model.calls))]
    # reply 1: asleep → activate → tools in the next request of the same reply
    assert names[0] == ACTIVATION
    assert names[1] == names[2] == ACTIVATION + NOTE_TOOLS
    # replies 2, 3, 4: visible (requests 3-6)
    assert names[3] == names[4] == names[5] == names[6] == ACTIVATION + NOTE_TOOLS
    # reply 5: asleep again
    assert names[7] == ACTIVATION
    prompts = [system_prompt(model, i) for i in range(len(model.calls))]
    assert 'module_name="note"' in prompts[0] and "<plugin name=" not in prompts[0]
    assert "Manages user notes; supports creating" in prompts[0]
    assert 'state="active" rounds_left="3"' in prompts[1]
    assert 'rounds_left="3"' in prompts[3] and 'rounds_left="2"' in prompts[5]
    assert 'rounds_left="1"' in prompts[6]
    hints = ["Last visible run" in p for p in prompts]
    assert hints == [False, False, False, False, False, False, True, False]
    assert "<injected_prompt>\nThe user has 1 note(s).\n</injected_prompt>" in prompts[3]
    assert "<plugin name=" not in prompts[7]
    # the activation's tool result is the seed's text with the full block
    activation = model.calls[1].messages[-1].tool_results[0].get_text()
    assert activation.startswith("Plugin `note` is now activated for the next 3 runs.\n")
    assert "Stop here and continue in the next agent step." in activation
    assert '<plugin name="Note plugin" module_name="note" state="active" rounds_left="3">' in (
        activation
    )
    assert "- add_note(title, content): Save a note." in activation
    assert example.NOTES == {"milk": "buy milk"}
    kinds = [
        type(e).__name__ for e in events if isinstance(e, PluginActivatedEvent | PluginSleptEvent)
    ]
    assert kinds == ["PluginActivatedEvent", "PluginSleptEvent"]
    # the slept event comes before the REPLY_END of the 4th reply
    ends = [i for i, e in enumerate(events) if isinstance(e, ReplyEndEvent)]
    slept_at = next(i for i, e in enumerate(events) if isinstance(e, PluginSleptEvent))
    assert ends[2] < slept_at < ends[3] and slept_at == ends[3] - 1
    assert agent.state.plugins == {}


async def test_a_sleeping_plugins_tool_is_never_run():
    notes = Notes()
    model = ScriptedChatModel(
        [said(call("add_note", {"title": "t", "content": "c"})), said("sorry")]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]))
    events = await reply_events(agent, "note this")
    assert notes.calls == [] and notes.items == {}
    text = results(events)["add_note"]
    assert "belongs to the plugin `note`, which is asleep" in text
    assert "Call activate_plugin('note') first" in text
    assert agent.state.plugins == {}
    assert notes.injections == 0  # never awake, never injected


async def test_a_tool_called_in_the_step_that_woke_its_plugin_does_not_run():
    notes = Notes()
    add = {"title": "t", "content": "c"}
    model = ScriptedChatModel(
        [
            # checked with activate_plugin, before it ran: still asleep
            said(call("activate_plugin", {"module_name": "note"}), call("add_note", add)),
            # checked after activate_plugin ran, in a later batch of the same step
            said(
                call("activate_plugin", {"module_name": "weather"}),
                call("send_message", {"text": "one moment"}),
                call("get_weather", {"city": "Oslo"}),
            ),
            said(call("add_note", add), call("get_weather", {"city": "Oslo"})),
            said("saved"),
        ]
    )
    toolkit = Toolkit(plugins=[notes.plugin(), weather_plugin(), basic_plugin()])
    agent = scripted_agent(model=model, toolkit=toolkit)
    events = await reply_events(agent, "note this")
    ended = tool_results(events)
    by_step = [(r.name, r.state, r.get_text()) for r in ended]
    assert by_step[0][0] == "add_note" and "which is asleep" in by_step[0][2]
    assert by_step[1][0] == "activate_plugin"
    assert [name for name, _, _ in by_step[2:5]] == [
        "activate_plugin",
        "send_message",
        "get_weather",
    ]
    assert "was activated in this same step" in by_step[4][2]
    assert by_step[4][1] is ToolResultState.ERROR
    assert by_step[0][1] is ToolResultState.ERROR
    assert [text for _, _, text in by_step[5:]] == ["saved t", "sunny in Oslo"]
    assert notes.calls == ["add_note"]  # only the call made in a later step ran
    assert "add_note" in tool_names(model, 1) and "get_weather" not in tool_names(model, 1)
    assert "get_weather" in tool_names(model, 2)


async def test_injection_runs_once_per_reasoning_step_and_only_while_awake():
    notes = Notes()
    model = ScriptedChatModel(
        [
            said("asleep"),
            said(call("activate_plugin", {"module_name": "note"})),
            said(call("add_note", {"title": "a", "content": "b"})),
            said("done"),
            said("again"),
        ]
    )
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[notes.plugin()]))
    await reply_events(agent, "hi")
    assert notes.injections == 0
    await reply_events(agent, "note a")
    # requests 2 and 3 were made with the plugin awake; acting steps inject nothing
    assert notes.injections == 2
    assert "NOTES-COUNT=0" in system_prompt(model, 2)
    assert "NOTES-COUNT=1" in system_prompt(model, 3)
    await reply_events(agent, "more")
    assert notes.injections == 3


async def test_a_failing_injection_is_shown_in_the_block_and_the_reply_goes_on():
    async def broken(state):
        raise LookupError("notes database unreachable")

    model = ScriptedChatModel([said("fine")])
    plugin = Notes().plugin(inject=broken, allow_sleep=None)
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[plugin]))
    events = await reply_events(agent, "hi")
    assert isinstance(events[-1], ReplyEndEvent)
    assert "could not be loaded: LookupError: notes database unreachable" in system_prompt(model, 0)


async def test_a_sync_injection_works_too():
    plugin = Notes().plugin(inject=lambda state: "SYNC-TEXT", allow_sleep=None)
    parts = await PluginScheduler([plugin]).prompt(AgentState())
    assert parts is not None and "SYNC-TEXT" in parts.dynamic


async def test_the_stable_part_is_byte_identical_whatever_is_awake_and_in_any_order():
    plugins = [Notes().plugin(), weather_plugin(), basic_plugin()]
    one = PluginScheduler(plugins)
    two = PluginScheduler(list(reversed(plugins)))
    asleep = await one.prompt(AgentState())
    awake = await two.prompt(AgentState(plugins={"note": 2, "weather": 1}))
    assert asleep is not None and awake is not None
    assert asleep.stable == awake.stable
    assert asleep.stable.index('module_name="note"') < asleep.stable.index('module_name="weather"')
    assert 'state="always_awake"' in asleep.stable  # a static always-awake block is stable
    assert asleep.dynamic == ""
    assert awake.dynamic.index('module_name="note"') < awake.dynamic.index('module_name="weather"')
    assert BRIEF in awake.stable


async def test_the_system_prompt_prefix_stays_the_same_across_a_conversation():
    example = load_example()
    _, model, _ = await example.run_conversation()
    prompts = [system_prompt(model, i) for i in range(len(model.calls))]
    stable = prompts[0]
    assert all(p.startswith(stable) for p in prompts)


async def test_a_disabled_plugin_is_invisible_and_its_tools_never_run():
    notes = Notes()
    model = ScriptedChatModel(
        [
            said(call("add_note", {"title": "t", "content": "c"})),
            said(call("activate_plugin", {"module_name": "note"})),
            said("ok"),
        ]
    )
    agent = scripted_agent(
        model=model, toolkit=Toolkit(plugins=[notes.plugin(enabled=False), weather_plugin()])
    )
    events = await reply_events(agent, "x")
    assert "Note plugin" not in system_prompt(model, 0)
    assert "disabled" in results(events)["add_note"]
    assert "disabled" in results(events)["activate_plugin"]
    assert notes.calls == [] and agent.state.plugins == {}


async def test_plugins_with_no_sleep_offer_no_activation_tools_and_no_catalogue():
    model = ScriptedChatModel([said("ok")])
    plugin = Plugin("Basic", "basic", "Sends messages", tools=[], prompt="Be kind.")
    agent = scripted_agent(model=model, toolkit=Toolkit(plugins=[plugin]))
    await reply_events(agent, "x")
    assert tool_names(model, 0) == []
    prompt = system_prompt(model, 0)
    assert "<plugin_catalogue>" not in prompt
    assert '<plugin name="Basic" module_name="basic" state="always_awake">' in prompt


async def test_the_token_benchmark_meets_its_target():
    path = Path(__file__).parents[2] / "benchmarks" / "plugin_tokens.py"
    spec = importlib.util.spec_from_file_location("plugin_tokens_bench", path)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    awake = Toolkit(plugins=[bench.make_plugin(*d, sleeps=False) for d in bench.DOMAINS])
    scheduled = Toolkit(plugins=[bench.make_plugin(*d, sleeps=True) for d in bench.DOMAINS])
    p1, s1, n1 = await bench.measure(awake, AgentState())
    p2, s2, n2 = await bench.measure(scheduled, AgentState(plugins={"note": 3, "calendar": 2}))
    assert (n1, n2) == (200, 12)
    assert (p2 + s2) <= 0.15 * (p1 + s1)
    # a sleeping plugin costs its brief line, a small part of what it costs awake, and the
    # fixed cost of scheduling (intro + the two activation tools) is less than one plugin's
    brief, full, fixed = await bench.per_plugin_costs()
    assert 0 < brief <= 0.05 * full
    assert 0 < fixed < full - brief
