"""Run one tool call through a real `Agent` (the model is scripted) and report what happened."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.event import RequireUserConfirmEvent
from tether.message import AssistantMsg, ToolResultBlock
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionMode
from tether.state import AgentState
from tether.testing import reply_events, scripted_agent, tool_results
from tether.tool import ToolBase


@dataclass
class Outcome:
    """What one scripted call did: whether it paused to ask, and the results it produced."""

    asked: bool
    results: list[ToolResultBlock]

    @property
    def output(self) -> str:
        """Every result's output, joined."""
        return "\n".join(str(r.output) for r in self.results)


async def run_call(
    tool: ToolBase,
    arguments: dict[str, Any],
    work: Path,
    *,
    mode: PermissionMode = PermissionMode.DEFAULT,
    **rules: Any,
) -> Outcome:
    """Let a scripted model call `tool` once in a fresh session whose work dir is `work`."""
    context = PermissionContext(mode=mode, working_directories=[str(work)], **rules)
    agent = scripted_agent(
        AssistantMsg("a", [ScriptedChatModel.tool_call(tool.name, arguments, id="c1")]),
        AssistantMsg("a", "done"),
        tools=[tool],
        state=AgentState(permission_context=context),
    )
    events = await reply_events(agent, "go")
    asked = any(isinstance(e, RequireUserConfirmEvent) for e in events)
    return Outcome(asked=asked, results=tool_results(events))
