"""Helpers for the plugin tests: a note plugin with a record of what really ran."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tether import AssistantMsg, ScriptedChatModel
from tether.event import AgentEvent
from tether.plugin import Plugin
from tether.testing import tool_results
from tether.tool import FunctionTool

BRIEF = "Manages user notes; activate when the user needs to record or look up notes."


@dataclass
class Notes:
    """A note store whose calls are recorded, so tests can prove a tool did not run."""

    items: dict[str, str] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    injections: int = 0

    def plugin(self, **overrides: Any) -> Plugin:
        def add_note(title: str, content: str) -> str:
            """Save a note.

            Args:
                title: A short title.
                content: The note's text.
            """
            self.calls.append("add_note")
            self.items[title] = content
            return f"saved {title}"

        def list_notes() -> str:
            """List the note titles."""
            self.calls.append("list_notes")
            return ", ".join(sorted(self.items)) or "(none)"

        def delete_note(title: str) -> str:
            """Delete a note."""
            self.calls.append("delete_note")
            self.items.pop(title, None)
            return f"deleted {title}"

        async def inject(state: Any) -> str:
            self.injections += 1
            return f"NOTES-COUNT={len(self.items)}"

        kwargs: dict[str, Any] = {
            "name": "Note plugin",
            "module_name": "note",
            "description": "Manages user notes",
            "tools": [
                add_note,
                list_notes,
                FunctionTool(delete_note, requires_confirmation=True),
            ],
            "prompt": "Keep titles short.",
            "inject": inject,
            "allow_sleep": True,
            "sleep_brief": BRIEF,
        }
        kwargs.update(overrides)
        return Plugin(**kwargs)


def weather_plugin(**overrides: Any) -> Plugin:
    def get_weather(city: str) -> str:
        """Current weather of a city."""
        return f"sunny in {city}"

    kwargs: dict[str, Any] = {
        "name": "Weather",
        "module_name": "weather",
        "description": "Weather forecasts",
        "tools": [get_weather],
        "allow_sleep": True,
        "sleep_brief": "Weather forecasts; activate when the user asks about the weather.",
    }
    kwargs.update(overrides)
    return Plugin(**kwargs)


def basic_plugin(**overrides: Any) -> Plugin:
    def send_message(text: str) -> str:
        """Send a message to the user's chat."""
        return "sent"

    kwargs: dict[str, Any] = {
        "name": "Basic",
        "module_name": "basic",
        "description": "Sends messages",
        "tools": [send_message],
        "allow_sleep": False,
    }
    kwargs.update(overrides)
    return Plugin(**kwargs)


def call(name: str, args: dict[str, Any] | None = None) -> Any:
    return ScriptedChatModel.tool_call(name, args)


def said(*blocks: Any) -> AssistantMsg:
    content: Any = list(blocks) if len(blocks) != 1 or not isinstance(blocks[0], str) else blocks[0]
    return AssistantMsg("assistant", content)


def tool_names(model: ScriptedChatModel, i: int) -> list[str]:
    return [t["name"] for t in model.calls[i].tools]


def system_prompt(model: ScriptedChatModel, i: int) -> str:
    return model.calls[i].messages[0].get_text_content() or ""


def results(events: list[AgentEvent]) -> dict[str, str]:
    """Tool results' text by tool name (the last one wins)."""
    return {r.name: r.get_text() for r in tool_results(events)}
