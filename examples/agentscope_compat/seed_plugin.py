"""What it shows: a plugin that sleeps until the model wakes it.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The note plugin sleeps (`allow_sleep=True` plus a `sleep_brief`). In the first reply the
model sees only its brief, wakes it with `activate_plugin("note")`, and its tools appear
in the very next request of that reply. It stays visible for the next 3 replies (the last
one carries the "Last visible run" hint), then sleeps again.

Run it: `python examples/agentscope_compat/seed_plugin.py` (no network needed).
"""

from __future__ import annotations

import asyncio
from typing import Any

from tether import Agent, AssistantMsg, ScriptedChatModel, Toolkit, UserMsg
from tether.event import AgentEvent, PluginActivatedEvent, PluginSleptEvent
from tether.plugin import Plugin
from tether.state import AgentState

NOTES: dict[str, str] = {}


def add_note(title: str, content: str) -> str:
    """Save a note.

    Args:
        title: A short title.
        content: The note's text.
    """
    NOTES[title] = content
    return f"Saved note {title!r}."


def list_notes() -> str:
    """List the titles of all notes."""
    return ", ".join(sorted(NOTES)) or "(no notes)"


async def note_summary(state: AgentState) -> str:
    """The prompt injection: runs only while the plugin is awake."""
    return f"The user has {len(NOTES)} note(s)."


note_plugin = Plugin(
    name="Note plugin",
    module_name="note",
    description="Manages user notes",
    tools=[add_note, list_notes],
    prompt="Keep titles short. Confirm every saved note to the user.",
    inject=note_summary,
    allow_sleep=True,
    sleep_brief=(
        "Manages user notes; supports creating, looking up, modifying and deleting note "
        "entries. Activate when the user explicitly mentions needing to take notes, view "
        "notes or organize information."
    ),
)

call = ScriptedChatModel.tool_call


def script() -> list[Any]:
    """What the scripted model answers, request by request."""
    return [
        # Reply 1: the plugin sleeps; the model wakes it, then uses it.
        AssistantMsg("assistant", [call("activate_plugin", {"module_name": "note"})]),
        AssistantMsg("assistant", [call("add_note", {"title": "milk", "content": "buy milk"})]),
        AssistantMsg("assistant", "Noted: buy milk."),
        # Replies 2-4: the plugin stays awake; the last one carries the hint.
        AssistantMsg("assistant", [call("list_notes")]),
        AssistantMsg("assistant", "You have one note: milk."),
        AssistantMsg("assistant", "Hello again!"),
        AssistantMsg("assistant", "Still here."),
        # Reply 5: asleep again.
        AssistantMsg("assistant", "Goodbye!"),
    ]


USER_TURNS = [
    "Please note that I need to buy milk.",
    "What notes do I have?",
    "Hi!",
    "Are you there?",
    "Bye.",
]


async def run_conversation() -> tuple[Agent, ScriptedChatModel, list[AgentEvent]]:
    """Play the five user turns; return the agent, the model (with its calls) and events."""
    NOTES.clear()
    model = ScriptedChatModel(script())
    agent = Agent(
        name="assistant",
        system_prompt="You are a helpful assistant.",
        model=model,
        toolkit=Toolkit(plugins=[note_plugin]),
    )
    events: list[AgentEvent] = []
    for text in USER_TURNS:
        async for event in agent.reply_stream(UserMsg("user", text)):
            events.append(event)
    model.assert_complete()
    return agent, model, events


async def main() -> None:
    """Print, per request, which tools the model was offered and the plugin's state."""
    agent, model, events = await run_conversation()
    for i, request in enumerate(model.calls):
        names = [t["name"] for t in request.tools]
        prompt = request.messages[0].get_text_content() or ""
        awake = 'module_name="note" state="active"' in prompt
        hint = "Last visible run" in prompt
        print(f"request {i}: tools={names} note_block={awake} hint={hint}")
    for event in events:
        if isinstance(event, PluginActivatedEvent | PluginSleptEvent):
            print(f"{event.type}: {event.module_name}")
    print("notes:", NOTES, "| state.plugins:", agent.state.plugins)


if __name__ == "__main__":
    asyncio.run(main())
