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
    ones). `close` ends the open blocks and the tool calls, in order. With `emit=False`
    the blocks are built the same way but no block events are made (for callers that
    only want the final message: building events is most of the cost).
    """

    __slots__ = ("_calls", "_events", "_open", "blocks", "emit", "reply_id", "usage")

    def __init__(self, reply_id: str, *, emit: bool = True) -> None:
        self.reply_id = reply_id
        self.emit = emit
        self.blocks: list[ContentBlock] = []
        self.usage: ChatUsage | None = None
        self._calls: dict[int, ToolCallBlock] = {}
        self._open: TextBlock | ThinkingBlock | None = None
        self._events: list[AgentEvent] = []

    def _take(self) -> list[AgentEvent]:
        events, self._events = self._events, []
        return events

    def _close_open(self) -> None:
        block = self._open
        if block is None:
            return
        self._open = None
        if not self.emit:
            return
        if isinstance(block, TextBlock):
            self._events.append(TextBlockEndEvent(reply_id=self.reply_id, block_id=block.id))
        else:
            self._events.append(
                ThinkingBlockEndEvent(
                    reply_id=self.reply_id, block_id=block.id, signature=block.signature
                )
            )

    def feed(self, delta: ModelDelta) -> list[AgentEvent]:
        """Take one delta; return the events it produced."""
        if isinstance(delta, TextDelta):
            if delta.text:
                self._text(delta.text)
        elif isinstance(delta, ThinkingDelta):
            self._thinking(delta)
        elif isinstance(delta, ToolCallDelta):
            self._tool_call(delta)
        elif isinstance(delta, UsageDelta):
            self.usage = delta.usage
        return self._take() if self._events else []

    def _text(self, text: str) -> None:
        block = self._open
        if not isinstance(block, TextBlock):
            self._close_open()
            block = TextBlock(id=new_id(), text="")
            self.blocks.append(block)
            self._open = block
            if self.emit:
                self._events.append(TextBlockStartEvent(reply_id=self.reply_id, block_id=block.id))
        block.text += text
        if self.emit:
            self._events.append(
                TextBlockDeltaEvent(reply_id=self.reply_id, block_id=block.id, delta=text)
            )

    def _thinking(self, delta: ThinkingDelta) -> None:
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
            self._close_open()
            block = ThinkingBlock(id=new_id(), thinking="")
            self.blocks.append(block)
            self._open = block
            if self.emit:
                self._events.append(
                    ThinkingBlockStartEvent(reply_id=self.reply_id, block_id=block.id)
                )
        if delta.text:
            block.thinking += delta.text
            if self.emit:
                self._events.append(
                    ThinkingBlockDeltaEvent(
                        reply_id=self.reply_id, block_id=block.id, delta=delta.text
                    )
                )
        if delta.signature is not None:
            block.signature = (block.signature or "") + delta.signature

    def _tool_call(self, delta: ToolCallDelta) -> None:
        call = self._calls.get(delta.index)
        if call is None:
            self._close_open()
            call = ToolCallBlock(id=delta.id or f"call_{new_id()}", name=delta.name or "", input="")
            self._calls[delta.index] = call
            self.blocks.append(call)
            if self.emit:
                self._events.append(
                    ToolCallStartEvent(reply_id=self.reply_id, block_id=call.id, name=call.name)
                )
        elif delta.name and not call.name:
            call.name = delta.name
        if delta.metadata:
            call.metadata.update(delta.metadata)
        if delta.arguments:
            call.input += delta.arguments
            if self.emit:
                self._events.append(
                    ToolCallDeltaEvent(
                        reply_id=self.reply_id, block_id=call.id, delta=delta.arguments
                    )
                )

    def close(self) -> list[AgentEvent]:
        """End the open block and every tool call; return those events."""
        self._close_open()
        for call in self._calls.values():
            if not call.input.strip():
                call.input = "{}"
            if self.emit:
                self._events.append(
                    ToolCallEndEvent(
                        reply_id=self.reply_id, block_id=call.id, tool_call=call.model_copy()
                    )
                )
        return self._take()

    def response(self, model_name: str = "") -> ChatResponse:
        """The assembled answer."""
        return ChatResponse(content=list(self.blocks), usage=self.usage, model_name=model_name)
