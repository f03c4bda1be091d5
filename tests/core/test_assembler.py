"""The StreamAssembler: deltas into blocks, and the events that fold back into the same blocks."""

import json
from collections.abc import AsyncIterator

from tether.agent import Agent
from tether.event import EventType, fold_event
from tether.message import AssistantMsg, TextBlock, ThinkingBlock, ToolCallBlock, UserMsg
from tether.model import (
    ChatModelBase,
    ChatRequest,
    ModelDelta,
    StopDelta,
    StreamAssembler,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)

DELTAS = [
    ThinkingDelta(text="Let me "),
    ThinkingDelta(text="think."),
    ThinkingDelta(signature="sig-1"),
    TextDelta("The "),
    TextDelta(""),
    TextDelta("answer."),
    ToolCallDelta(index=0, id="call_a", name="add", arguments='{"a": '),
    ToolCallDelta(index=1, id="call_b", name="echo"),
    ToolCallDelta(index=0, id="", name="", arguments="1}"),
    ToolCallDelta(index=1, arguments='{"text": "hi"}'),
    ToolCallDelta(index=2, id="call_c", name="now"),
]


def assemble(emit: bool) -> tuple[StreamAssembler, list]:
    assembler = StreamAssembler("r1", emit=emit)
    events = [e for d in DELTAS for e in assembler.feed(d)]
    events += assembler.close()
    return assembler, events


def test_blocks_are_whole_after_close() -> None:
    assembler, _ = assemble(emit=True)
    thinking, text, add, echo, now = assembler.blocks
    assert isinstance(thinking, ThinkingBlock)
    assert (thinking.thinking, thinking.signature) == ("Let me think.", "sig-1")
    assert isinstance(text, TextBlock) and text.text == "The answer."
    assert isinstance(add, ToolCallBlock) and (add.id, add.name) == ("call_a", "add")
    assert json.loads(add.input) == {"a": 1}
    assert isinstance(echo, ToolCallBlock) and json.loads(echo.input) == {"text": "hi"}
    assert isinstance(now, ToolCallBlock) and now.input == "{}"  # no arguments at all


def test_event_order_and_that_events_fold_into_the_same_blocks() -> None:
    assembler, events = assemble(emit=True)
    assert [e.type for e in events] == [
        EventType.THINKING_BLOCK_START,
        EventType.THINKING_BLOCK_DELTA,
        EventType.THINKING_BLOCK_DELTA,
        EventType.THINKING_BLOCK_END,
        EventType.TEXT_BLOCK_START,
        EventType.TEXT_BLOCK_DELTA,
        EventType.TEXT_BLOCK_DELTA,
        EventType.TEXT_BLOCK_END,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_END,
        EventType.TOOL_CALL_END,
    ]
    assert all(e.reply_id == "r1" for e in events)
    msg = AssistantMsg("a", [])
    for event in events:
        fold_event(msg, event)
    assert msg.content == assembler.blocks


def test_without_events_the_blocks_are_the_same() -> None:
    quiet, events = assemble(emit=False)
    loud, _ = assemble(emit=True)
    assert events == []
    strip = [b.model_dump(exclude={"id"}) for b in quiet.blocks]
    assert strip == [b.model_dump(exclude={"id"}) for b in loud.blocks]


def test_a_long_stream_of_small_pieces_joins_exactly() -> None:
    assembler = StreamAssembler("r1", emit=False)
    pieces = [f"{i:05d} " for i in range(20_000)]
    for piece in pieces:
        assembler.feed(TextDelta(piece))
    assembler.close()
    (block,) = assembler.response().content
    assert isinstance(block, TextBlock) and block.text == "".join(pieces)


class CutShort(ChatModelBase):
    """A model whose answer stops at the output token limit."""

    def __init__(self) -> None:
        super().__init__("cut", context_length=1_000)

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        yield TextDelta("The answer is")
        yield StopDelta("length", "max_tokens")


async def test_why_the_model_stopped_reaches_the_response_and_model_call_end() -> None:
    assert (await CutShort().generate(ChatRequest([]))).stop_reason == "length"
    agent = Agent("a", "Be brief.", CutShort())
    events = [e async for e in agent.reply_stream(UserMsg("u", "go"))]
    (end,) = [e for e in events if e.type == EventType.MODEL_CALL_END]
    assert end.stop_reason == "length"
    assert events[-1].msg.get_text_content() == "The answer is"


def test_a_tool_call_end_event_shares_nothing_with_the_stored_call() -> None:
    assembler = StreamAssembler("r1")
    assembler.feed(ToolCallDelta(index=0, id="c", name="f", metadata={"sig": "a"}))
    (end,) = assembler.close()
    end.tool_call.metadata["sig"] = "changed by a consumer"
    (call,) = assembler.blocks
    assert isinstance(call, ToolCallBlock) and call.metadata == {"sig": "a"}
