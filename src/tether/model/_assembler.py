"""The one stream assembler: provider deltas in, blocks and events out."""

from __future__ import annotations

from tether._ids import new_id
from tether.event import (
    AgentEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
)
from tether.message import ChatUsage, ContentBlock, TextBlock, ThinkingBlock, ToolCallBlock
from tether.model._types import (
    ChatResponse,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)

__all__ = ["StreamAssembler"]


class StreamAssembler:
    """Builds a response's blocks from deltas and says what happened as events.

    Text and thinking deltas extend the open block of their kind or open a new one;
    tool-call deltas are merged by `index` (empty ids and names never overwrite known
    ones). `close` ends the open blocks and the tool calls, in order.
    """

    __slots__ = ("_calls", "_open", "blocks", "reply_id", "usage")

    def __init__(self, reply_id: str) -> None:
        self.reply_id = reply_id
        self.blocks: list[ContentBlock] = []
        self.usage: ChatUsage | None = None
        self._calls: dict[int, ToolCallBlock] = {}
        self._open: TextBlock | ThinkingBlock | None = None

    def _close_open(self, events: list[AgentEvent]) -> None:
        block = self._open
        if block is None:
            return
        self._open = None
        if isinstance(block, TextBlock):
            events.append(TextBlockEndEvent(reply_id=self.reply_id, block_id=block.id))
        else:
            events.append(
                ThinkingBlockEndEvent(
                    reply_id=self.reply_id, block_id=block.id, signature=block.signature
                )
            )

    def feed(self, delta: ModelDelta) -> list[AgentEvent]:
        """Take one delta; return the events it produced."""
        events: list[AgentEvent] = []
        if isinstance(delta, TextDelta):
            if delta.text:
                self._text(delta.text, events)
        elif isinstance(delta, ThinkingDelta):
            self._thinking(delta, events)
        elif isinstance(delta, ToolCallDelta):
            self._tool_call(delta, events)
        elif isinstance(delta, UsageDelta):
            self.usage = delta.usage
        return events

    def _text(self, text: str, events: list[AgentEvent]) -> None:
        block = self._open
        if not isinstance(block, TextBlock):
            self._close_open(events)
            block = TextBlock(id=new_id(), text="")
            self.blocks.append(block)
            self._open = block
            events.append(TextBlockStartEvent(reply_id=self.reply_id, block_id=block.id))
        block.text += text
        events.append(TextBlockDeltaEvent(reply_id=self.reply_id, block_id=block.id, delta=text))

    def _thinking(self, delta: ThinkingDelta, events: list[AgentEvent]) -> None:
        block = self._open
        if not isinstance(block, ThinkingBlock):
            if not delta.text and delta.signature is not None:
                last = next(
                    (b for b in reversed(self.blocks) if isinstance(b, ThinkingBlock)), None
                )
                if last is not None:
                    last.signature = delta.signature
                    return
            if not delta.text and delta.signature is None:
                return
            self._close_open(events)
            block = ThinkingBlock(id=new_id(), thinking="")
            self.blocks.append(block)
            self._open = block
            events.append(ThinkingBlockStartEvent(reply_id=self.reply_id, block_id=block.id))
        if delta.text:
            block.thinking += delta.text
            events.append(
                ThinkingBlockDeltaEvent(reply_id=self.reply_id, block_id=block.id, delta=delta.text)
            )
        if delta.signature is not None:
            block.signature = (block.signature or "") + delta.signature

    def _tool_call(self, delta: ToolCallDelta, events: list[AgentEvent]) -> None:
        call = self._calls.get(delta.index)
        if call is None:
            self._close_open(events)
            call = ToolCallBlock(id=delta.id or f"call_{new_id()}", name=delta.name or "", input="")
            self._calls[delta.index] = call
            self.blocks.append(call)
            events.append(
                ToolCallStartEvent(reply_id=self.reply_id, block_id=call.id, name=call.name)
            )
        elif delta.name and not call.name:
            call.name = delta.name
        if delta.metadata:
            call.metadata.update(delta.metadata)
        if delta.arguments:
            call.input += delta.arguments
            events.append(
                ToolCallDeltaEvent(reply_id=self.reply_id, block_id=call.id, delta=delta.arguments)
            )

    def close(self) -> list[AgentEvent]:
        """End the open block and every tool call; return those events."""
        events: list[AgentEvent] = []
        self._close_open(events)
        for call in self._calls.values():
            if not call.input.strip():
                call.input = "{}"
            events.append(
                ToolCallEndEvent(
                    reply_id=self.reply_id, block_id=call.id, tool_call=call.model_copy()
                )
            )
        return events

    def response(self, model_name: str = "") -> ChatResponse:
        """The assembled answer."""
        return ChatResponse(content=list(self.blocks), usage=self.usage, model_name=model_name)
