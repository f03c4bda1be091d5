"""The one stream assembler: provider deltas in, blocks and events out."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from tether._ids import new_id
from tether.event import (
    AgentEvent,
    ModelCallEndEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
    TextBlockStartEvent,
    ThinkingBlockDeltaEvent,
    ThinkingBlockEndEvent,
    ThinkingBlockStartEvent,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    delta_maker,
)
from tether.message import (
    ChatUsage,
    ContentBlock,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    detached,
)
from tether.model._pricing import cost
from tether.model._types import (
    ChatResponse,
    ModelDelta,
    StopDelta,
    StopReason,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)

__all__ = ["StreamAssembler"]

_NO_EVENTS: tuple[AgentEvent, ...] = ()


class StreamAssembler:
    """Builds a response's blocks from deltas and says what happened as events.

    Text and thinking deltas extend the open block of their kind or open a new one;
    tool-call deltas are merged by `index` (empty ids and names never overwrite known
    ones). `close` ends the open blocks and the tool calls, in order. With `emit=False`
    the blocks are built the same way but no block events are made (for callers that
    only want the final message: building events is most of the cost).

    Text arrives in many small pieces, so pieces are kept in lists and joined once, when
    their block ends: the texts of `blocks` are complete after `close`, not before.
    """

    __slots__ = (
        "_args",
        "_calls",
        "_make",
        "_makers",
        "_open",
        "_parts",
        "blocks",
        "emit",
        "reply_id",
        "stop_reason",
        "usage",
    )

    def __init__(self, reply_id: str, *, emit: bool = True) -> None:
        self.reply_id = reply_id
        self.emit = emit
        self.blocks: list[ContentBlock] = []
        self.usage: ChatUsage | None = None
        self.stop_reason: StopReason | None = None
        self._open: TextBlock | ThinkingBlock | None = None
        self._parts: list[str] = []  # the open block's text so far
        self._make: Callable[[str], AgentEvent] | None = None  # the open block's delta events
        self._calls: dict[int, ToolCallBlock] = {}
        self._args: dict[int, list[str]] = {}  # each call's argument pieces so far
        self._makers: dict[int, Callable[[str], AgentEvent]] = {}  # each call's delta events

    def feed(self, delta: ModelDelta) -> Sequence[AgentEvent]:
        """Take one delta; return the events it produced."""
        if type(delta) is TextDelta:
            text = delta.text
            if text and type(self._open) is TextBlock:  # the common case: more of the text
                self._parts.append(text)
                make = self._make
                return _NO_EVENTS if make is None else (make(text),)
            return self._text(text)
        if isinstance(delta, ThinkingDelta):
            return self._thinking(delta)
        if isinstance(delta, ToolCallDelta):
            return self._tool_call(delta)
        if isinstance(delta, TextDelta):  # a subclass
            return self._text(delta.text)
        if isinstance(delta, UsageDelta):
            self.usage = delta.usage
        elif isinstance(delta, StopDelta):
            self.stop_reason = delta.reason
        return _NO_EVENTS

    def _text(self, text: str) -> Sequence[AgentEvent]:
        if not text:
            return _NO_EVENTS
        events: list[AgentEvent] = []
        block = self._open
        if type(block) is not TextBlock:
            block = TextBlock(id=new_id(), text="")
            events = self._start(block)
        self._parts.append(text)
        if self._make is not None:
            events.append(self._make(text))
        return events

    def _start(self, block: TextBlock | ThinkingBlock) -> list[AgentEvent]:
        """Close the open block and open `block`; return the events of both."""
        events = self._close_open()
        self.blocks.append(block)
        self._open = block
        if self.emit:
            if isinstance(block, TextBlock):
                events.append(TextBlockStartEvent(reply_id=self.reply_id, block_id=block.id))
                self._make = delta_maker(TextBlockDeltaEvent, self.reply_id, block.id)
            else:
                events.append(ThinkingBlockStartEvent(reply_id=self.reply_id, block_id=block.id))
                self._make = delta_maker(ThinkingBlockDeltaEvent, self.reply_id, block.id)
        return events

    def _close_open(self) -> list[AgentEvent]:
        block = self._open
        if block is None:
            return []
        self._open = self._make = None
        text = "".join(self._parts)
        self._parts = []
        if isinstance(block, TextBlock):
            block.__dict__["text"] = text  # a field given at construction: no __setattr__
            if self.emit:
                return [TextBlockEndEvent(reply_id=self.reply_id, block_id=block.id)]
        else:
            block.thinking = text
            if self.emit:
                return [
                    ThinkingBlockEndEvent(
                        reply_id=self.reply_id,
                        block_id=block.id,
                        signature=block.signature,
                        redacted=block.redacted,
                    )
                ]
        return []

    def _thinking(self, delta: ThinkingDelta) -> Sequence[AgentEvent]:
        if delta.redacted:  # a whole block at once
            whole = ThinkingBlock(thinking="", signature=delta.signature, redacted=True)
            return self._start(whole) + self._close_open()
        block = self._open
        events: list[AgentEvent] = []
        if not isinstance(block, ThinkingBlock):
            if not delta.text:
                if delta.signature is not None:  # a late signature for the last thinking block
                    last = next(
                        (
                            b
                            for b in reversed(self.blocks)
                            if isinstance(b, ThinkingBlock) and not b.redacted
                        ),
                        None,
                    )
                    if last is not None:
                        last.signature = delta.signature
                        return _NO_EVENTS
                else:
                    return _NO_EVENTS
            block = ThinkingBlock(id=new_id(), thinking="")
            events = self._start(block)
        if delta.text:
            self._parts.append(delta.text)
            if self._make is not None:
                events.append(self._make(delta.text))
        if delta.signature is not None:
            block.signature = (block.signature or "") + delta.signature
        return events

    def _tool_call(self, delta: ToolCallDelta) -> Sequence[AgentEvent]:
        events: list[AgentEvent] = []
        call = self._calls.get(delta.index)
        if call is None:
            events = self._close_open()
            call = ToolCallBlock(id=delta.id or f"call_{new_id()}", name=delta.name or "", input="")
            self._calls[delta.index] = call
            self._args[delta.index] = []
            self.blocks.append(call)
            if self.emit:
                events.append(
                    ToolCallStartEvent(reply_id=self.reply_id, block_id=call.id, name=call.name)
                )
                self._makers[delta.index] = delta_maker(ToolCallDeltaEvent, self.reply_id, call.id)
        elif delta.name and not call.name:
            call.name = delta.name
        if delta.metadata:
            call.metadata.update(delta.metadata)
        if delta.arguments:
            self._args[delta.index].append(delta.arguments)
            if self.emit:
                events.append(self._makers[delta.index](delta.arguments))
        return events

    def close(self) -> list[AgentEvent]:
        """End the open block and every tool call; return those events."""
        events = self._close_open()
        for index, call in self._calls.items():
            arguments = "".join(self._args[index])
            # `input` was given at construction (in the fields set): no pydantic __setattr__
            call.__dict__["input"] = arguments if arguments.strip() else "{}"
            if self.emit:
                events.append(
                    ToolCallEndEvent(
                        reply_id=self.reply_id, block_id=call.id, tool_call=detached(call)
                    )
                )
        return events

    def response(self, model_name: str = "") -> ChatResponse:
        """The assembled answer."""
        return ChatResponse(
            content=list(self.blocks),
            usage=self._priced(model_name),
            model_name=model_name,
            stop_reason=self.stop_reason,
        )

    def end_event(self, model_name: str) -> ModelCallEndEvent:
        """The MODEL_CALL_END event of this answer: the model, its usage, why it stopped."""
        usage = self._priced(model_name)
        return ModelCallEndEvent(
            reply_id=self.reply_id,
            model_name=model_name,
            usage=usage,
            stop_reason=self.stop_reason,
            cost=usage.cost if usage is not None else None,
        )

    def _priced(self, model_name: str) -> ChatUsage | None:
        """The usage with its cost from the price table (a provider's own figure is kept)."""
        usage = self.usage
        if usage is None or usage.cost is not None:
            return usage
        priced = cost(usage, model_name)
        if priced is None:
            return usage
        self.usage = usage = usage.model_copy(update={"cost": priced})
        return usage
