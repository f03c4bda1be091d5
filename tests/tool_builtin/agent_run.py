"""Run one tool call through a real `Agent` (the model is scripted) and report what happened."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tether.agent import Agent
from tether.event import AgentEvent, RequireUserConfirmEvent, ToolResultEndEvent
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionMode
from tether.state import AgentState
from tether.tool import ToolBase, Toolkit


@dataclass
class Outcome:
    """What one scripted call did: whether it paused to ask, and the results it produced."""

    asked: bool
    results: list[ToolResultBlock]

    @property
    def output(self) -> str:
        """Every result's output, joined."""
        return "\n".join(str(r.output) for r in self.results)


def _results(events: list[AgentEvent]) -> list[ToolResultBlock]:
    return [e.tool_result for e in events if isinstance(e, ToolResultEndEvent)]


async def run_call(
    tool: ToolBase,
    arguments: dict[str, Any],
    work: Path,
    *,
    mode: PermissionMode = PermissionMode.DEFAULT,
    **rules: Any,
) -> Outcome:
    """Let a scripted model call `tool` once in a fresh session whose work dir is `work`."""
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [ScriptedChatModel.tool_call(tool.name, arguments, id="c1")]),
            AssistantMsg("a", "done"),
        ]
    )
    context = PermissionContext(mode=mode, working_directories=[str(work)], **rules)
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[tool]),
        state=AgentState(permission_context=context),
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "go"))]
    asked = any(isinstance(e, RequireUserConfirmEvent) for e in events)
    return Outcome(asked=asked, results=_results(events))
