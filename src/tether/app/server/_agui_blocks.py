"""One agent's text, thinking and tool events as AG-UI events (the parent's or a sub-agent's)."""

from __future__ import annotations

from ag_ui.core import (
    BaseEvent,
    ReasoningEndEvent,
    ReasoningMessageContentEvent,
    ReasoningMessageEndEvent,
    ReasoningMessageStartEvent,
    ReasoningStartEvent,
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

__all__ = ["BlockTranslator"]


class BlockTranslator:
    """Translates one agent's block events.

    For a sub-agent, `subagent_run_id` attributes them and `call_prefix` (its call path and
    a `/`) qualifies its tool calls' ids, as in its pause's interrupts (`boss1/wri0`): a
    child's call ids are unique only within the child's reply.
    """

    def __init__(self, subagent_run_id: str | None = None, call_prefix: str = "") -> None:
        self.subagent_run_id = subagent_run_id
        self.call_prefix = call_prefix
        self._last_text: str | None = None

    def translate(self, event: AgentEvent) -> list[BaseEvent]:
        """The AG-UI events for a text, thinking or tool event (none for the others)."""
        return self._message(event) or self._tool(event)

    def _message(self, event: AgentEvent) -> list[BaseEvent]:
        by = self.subagent_run_id
        match event:
            case TextBlockStartEvent():
                self._last_text = event.block_id
                return [
                    TextMessageStartEvent(
                        message_id=event.block_id, role="assistant", subagent_run_id=by
                    )
                ]
            case TextBlockDeltaEvent() if event.delta:
                return [
                    TextMessageContentEvent(
                        message_id=event.block_id, delta=event.delta, subagent_run_id=by
                    )
                ]
            case TextBlockEndEvent():
                return [TextMessageEndEvent(message_id=event.block_id, subagent_run_id=by)]
            case ThinkingBlockStartEvent():
                return [
                    ReasoningStartEvent(message_id=event.block_id, subagent_run_id=by),
                    ReasoningMessageStartEvent(
                        message_id=event.block_id, role="reasoning", subagent_run_id=by
                    ),
                ]
            case ThinkingBlockDeltaEvent() if event.delta:
                return [
                    ReasoningMessageContentEvent(
                        message_id=event.block_id, delta=event.delta, subagent_run_id=by
                    )
                ]
            case ThinkingBlockEndEvent():
                return [
                    ReasoningMessageEndEvent(message_id=event.block_id, subagent_run_id=by),
                    ReasoningEndEvent(message_id=event.block_id, subagent_run_id=by),
                ]
        return []

    def _tool(self, event: AgentEvent) -> list[BaseEvent]:
        by, prefix = self.subagent_run_id, self.call_prefix
        match event:
            case TetherToolCallStart():
                start = ToolCallStartEvent(
                    tool_call_id=prefix + event.block_id,
                    tool_call_name=event.name,
                    parent_message_id=self._last_text,
                    subagent_run_id=by,
                )
                return [start]
            case ToolCallDeltaEvent() if event.delta:
                return [
                    ToolCallArgsEvent(
                        tool_call_id=prefix + event.block_id, delta=event.delta, subagent_run_id=by
                    )
                ]
            case TetherToolCallEnd():
                return [ToolCallEndEvent(tool_call_id=prefix + event.block_id, subagent_run_id=by)]
            case ToolResultEndEvent():
                result = event.tool_result
                return [
                    ToolCallResultEvent(
                        message_id=f"result-{prefix}{result.id}",
                        tool_call_id=prefix + result.id,
                        content=result.get_text(),
                        role="tool",
                        subagent_run_id=by,
                    )
                ]
        return []
