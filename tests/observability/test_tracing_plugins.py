"""Plugin activations on the reply span: an event each, and the list of activated plugins."""

from __future__ import annotations

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.plugin import Plugin
from tether.tool import Toolkit

call = ScriptedChatModel.tool_call
NOTES: list[str] = []


def add_note(title: str) -> str:
    """Save a note.

    Args:
        title: A short title.
    """
    NOTES.append(title)
    return "saved"


NOTE = Plugin(
    name="Notes",
    module_name="note",
    description="Notes",
    tools=[add_note],
    prompt="Keep titles short.",
    allow_sleep=True,
    sleep_brief="Takes notes; activate when the user wants a note.",
)


async def test_an_activation_is_an_event_and_an_attribute_of_the_reply(telemetry) -> None:
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("activate_plugin", {"module_name": "note", "rounds": 1})]),
            AssistantMsg("a", [call("add_note", {"title": "milk"})]),
            AssistantMsg("a", "noted"),
            AssistantMsg("a", "bye"),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(plugins=[NOTE]),
        middlewares=[telemetry.middleware()],
    )
    await agent.reply(UserMsg("user", "note: milk"))
    await agent.reply(UserMsg("user", "bye"))
    model.assert_complete()
    first, second = sorted(telemetry.named("invoke_agent bot"), key=lambda s: s.start_time)
    assert list(first.attributes["tether.plugin.activations"]) == ["note"]
    activated = [e for e in first.events if e.name == "tether.plugin.activated"]
    assert [
        (e.attributes["tether.plugin.name"], e.attributes["tether.plugin.rounds_left"])
        for e in activated
    ] == [("note", 1)]
    tools = sorted(s.name for s in telemetry.spans() if s.name.startswith("execute_tool"))
    assert tools == ["execute_tool activate_plugin", "execute_tool add_note"]
    slept = [e.name for s in (first, second) for e in s.events if e.name == "tether.plugin.slept"]
    assert slept == ["tether.plugin.slept"]
