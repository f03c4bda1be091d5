"""tether's logged events as AG-UI events, in the order the AG-UI spec requires.

One `AguiTranslator` per stream: it turns each logged tether event into zero or more
`ag-ui-protocol` events, and ends the run with `RUN_FINISHED` (success, or an interrupt
outcome for a confirmation), or `RUN_ERROR`. Text, thinking and tool events go through
`BlockTranslator`; a sub-agent's (`SubAgentEvent`) become AG-UI's subagent events
(`_agui_subagents`); an interrupt for a sub-agent's call names the sub-agent.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
)

from tether.app.server._agui_blocks import BlockTranslator
from tether.app.server._agui_subagents import Subagents, run_id_of
from tether.event import (
    AgentEvent,
    ErrorEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    SubAgentEvent,
    ToolResultEndEvent,
)
from tether.message import ToolCallBlock

__all__ = ["TOOL_APPROVAL", "AguiTranslator"]

TOOL_APPROVAL = "tool_approval"
"""The interrupt `reason` of a tool call waiting for the user's confirmation."""


class AguiTranslator:
    """Translates one run's tether events into AG-UI events."""

    def __init__(self, thread_id: str, run_id: str) -> None:
        self.thread_id = thread_id
        self.run_id = run_id
        self.finished = False
        self._blocks = BlockTranslator()
        self._subagents = Subagents()

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events for one tether event (none for those AG-UI has no word for)."""
        if isinstance(event, SubAgentEvent):
            return self._subagents.translate(event)
        if isinstance(event, ToolResultEndEvent):  # a sub-agent that raised ends here
            return [*self._subagents.call_ended(event), *self._blocks.translate(event)]
        return self._blocks.translate(event) or self._end(event)

    def _end(self, event: AgentEvent) -> list[BaseEvent]:
        match event:
            case RequireUserConfirmEvent():
                closing = self._subagents.close_all("suspended")
                return [*closing, self._finish_interrupted(event.reply_id, event.tool_calls)]
            case RequireExternalExecutionEvent():
                pending = [call.id for call in event.tool_calls]
                closing = self._subagents.close_all("suspended")
                outcome = RunFinishedSuccessOutcome(pending_tool_call_ids=pending)
                return [*closing, self._finish(outcome)]
            case ReplyEndEvent():
                text = event.msg.get_text_content()
                closing = self._subagents.close_all("error")
                return [*closing, self._finish(RunFinishedSuccessOutcome(), result=text)]
            case ErrorEvent():
                closing = self._subagents.close_all("error")
                return [*closing, self.error(event.error_type, event.message)]
        return []

    def error(self, code: str, message: str) -> RunErrorEvent:
        """End the run with `RUN_ERROR` (open sub-agent invocations are left as they are)."""
        self.finished = True
        return RunErrorEvent(code=code, message=message)

    def _finish(self, outcome: Any, result: Any = None) -> RunFinishedEvent:
        self.finished = True
        return RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, result=result
        )

    def _finish_interrupted(self, reply_id: str, calls: list[ToolCallBlock]) -> RunFinishedEvent:
        interrupts = [_interrupt(reply_id, call) for call in calls]
        return self._finish(RunFinishedInterruptOutcome(interrupts=interrupts))


def _interrupt(reply_id: str, call: ToolCallBlock) -> Interrupt:
    """A call awaiting confirmation; a sub-agent's names it and is attributed to it."""
    path = [str(name) for name in call.metadata.get("agent_path") or ()]
    metadata = {
        "toolName": call.name,
        "arguments": _arguments(call.input),
        "suggestedRules": [rule.model_dump(mode="json") for rule in call.suggested_rules],
    }
    message = f"Allow the call to {call.name}?"
    by = None
    if path:
        metadata["agentPath"] = path
        message = f"{' > '.join(path)} wants to run {call.name}: allow it?"
        by = run_id_of(reply_id, tuple(call.id.split("/")[:-1]))
    return Interrupt(
        id=call.id,
        reason=TOOL_APPROVAL,
        message=message,
        tool_call_id=call.id,
        metadata=metadata,
        subagent_run_id=by,
    )


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
