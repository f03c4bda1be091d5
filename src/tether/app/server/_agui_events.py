"""tether's logged events as AG-UI events, in the order the AG-UI spec requires.

One `AguiTranslator` per stream: it turns each logged tether event into zero or more
`ag-ui-protocol` events, and ends the run with `RUN_FINISHED` (success, or an interrupt
outcome for a confirmation), or `RUN_ERROR`.
"""

from __future__ import annotations

import json
from typing import Any

from ag_ui.core import (
    BaseEvent,
    Interrupt,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
    RunErrorEvent,
    RunFinishedEvent,
    RunFinishedInterruptOutcome,
    RunFinishedSuccessOutcome,
    TextMessageContentEvent,
    TextMessageEndEvent,
    TextMessageStartEvent,
    ToolCallArgsEvent,
    ToolCallEndEvent,
    ToolCallResultEvent,
    ToolCallStartEvent,
)

from tether.event import (
    AgentEvent,
    ErrorEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolResultEndEvent,
)
from tether.event import ToolCallEndEvent as TetherToolCallEnd
from tether.event import ToolCallStartEvent as TetherToolCallStart
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
        self._last_text: str | None = None

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events for one tether event (none for those AG-UI has no word for)."""
        return self._message(event) or self._tool(event) or self._end(event)

    def _message(self, event: AgentEvent) -> list[BaseEvent]:
        match event:
            case TextBlockStartEvent():
                self._last_text = event.block_id
                return [TextMessageStartEvent(message_id=event.block_id, role="assistant")]
            case TextBlockDeltaEvent() if event.delta:
                return [TextMessageContentEvent(message_id=event.block_id, delta=event.delta)]
            case TextBlockEndEvent():
                return [TextMessageEndEvent(message_id=event.block_id)]
            case ThinkingBlockStartEvent():
                return [
                    ReasoningStartEvent(message_id=event.block_id),
                    ReasoningMessageStartEvent(message_id=event.block_id, role="reasoning"),
                ]
            case ThinkingBlockDeltaEvent() if event.delta:
                return [ReasoningMessageContentEvent(message_id=event.block_id, delta=event.delta)]
            case ThinkingBlockEndEvent():
                return [
                    ReasoningMessageEndEvent(message_id=event.block_id),
                    ReasoningEndEvent(message_id=event.block_id),
                ]
        return []

    def _tool(self, event: AgentEvent) -> list[BaseEvent]:
        match event:
            case TetherToolCallStart():
                start = ToolCallStartEvent(
                    tool_call_id=event.block_id,
                    tool_call_name=event.name,
                    parent_message_id=self._last_text,
                )
                return [start]
            case ToolCallDeltaEvent() if event.delta:
                return [ToolCallArgsEvent(tool_call_id=event.block_id, delta=event.delta)]
            case TetherToolCallEnd():
                return [ToolCallEndEvent(tool_call_id=event.block_id)]
            case ToolResultEndEvent():
                result = event.tool_result
                message_id = f"result-{result.id}"
                text = result.get_text()
                return [
                    ToolCallResultEvent(
                        message_id=message_id, tool_call_id=result.id, content=text, role="tool"
                    )
                ]
        return []

    def _end(self, event: AgentEvent) -> list[BaseEvent]:
        match event:
            case RequireUserConfirmEvent():
                return [self._finish_interrupted(event.tool_calls)]
            case RequireExternalExecutionEvent():
                pending = [call.id for call in event.tool_calls]
                return [self._finish(RunFinishedSuccessOutcome(pending_tool_call_ids=pending))]
            case ReplyEndEvent():
                text = event.msg.get_text_content()
                return [self._finish(RunFinishedSuccessOutcome(), result=text)]
            case ErrorEvent():
                return [self.error(event.error_type, event.message)]
        return []

    def error(self, code: str, message: str) -> RunErrorEvent:
        """End the run with `RUN_ERROR`."""
        self.finished = True
        return RunErrorEvent(code=code, message=message)

    def _finish(self, outcome: Any, result: Any = None) -> RunFinishedEvent:
        self.finished = True
        return RunFinishedEvent(
            thread_id=self.thread_id, run_id=self.run_id, outcome=outcome, result=result
        )

    def _finish_interrupted(self, calls: list[ToolCallBlock]) -> RunFinishedEvent:
        interrupts = [
            Interrupt(
                id=call.id,
                reason=TOOL_APPROVAL,
                message=f"Allow the call to {call.name}?",
                tool_call_id=call.id,
                metadata={
                    "toolName": call.name,
                    "arguments": _arguments(call.input),
                    "suggestedRules": [
                        rule.model_dump(mode="json") for rule in call.suggested_rules
                    ],
                },
            )
            for call in calls
        ]
        return self._finish(RunFinishedInterruptOutcome(interrupts=interrupts))


def _arguments(text: str) -> Any:
    try:
        return json.loads(text)
    except ValueError:
        return text
