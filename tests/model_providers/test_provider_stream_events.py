"""The delta events of a real stream are the events the validated constructors make, and a
streamed chunk's fast path (a piece of text and nothing else) gives way to the full one."""

import json

import pytest
from provider_replay import ReplayServer, Reply
from provider_wire import PROVIDERS, SSE, make_model, stream_reply

from tether.event import (
    EventType,
    TextBlockDeltaEvent,
    ThinkingBlockDeltaEvent,
    ToolCallDeltaEvent,
    event_adapter,
)
from tether.message import TextBlock, ThinkingBlock, UserMsg
from tether.model import ChatRequest, StreamAssembler, TextDelta

DELTA_TYPES = {
    EventType.TEXT_BLOCK_DELTA: TextBlockDeltaEvent,
    EventType.THINKING_BLOCK_DELTA: ThinkingBlockDeltaEvent,
    EventType.TOOL_CALL_DELTA: ToolCallDeltaEvent,
}
TOOL = {
    "name": "lookup",
    "description": "Look it up.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}


async def run(m, request):
    assembler = StreamAssembler(reply_id="r1")
    events, deltas = [], []
    async for delta in m.stream(request):
        deltas.append(delta)
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events, deltas


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_stream_delta_events_equal_validated_ones(
    server: ReplayServer, provider: str
) -> None:
    script: list[tuple] = [("text", "Hel"), ("text", "lo"), ("text", ", you")]
    if provider != "gemini":  # Gemini's calls come whole
        script += [("call", 0, "call_1", "lookup"), ("args", 0, '{"q": '), ("args", 0, '"x"}')]
    server.add(stream_reply(provider, script))
    request = ChatRequest([UserMsg("user", "hi")], tools=[TOOL])
    assembler, events, deltas = await run(make_model(provider, server.url), request)
    server.assert_done()
    text = [d for d in deltas if isinstance(d, TextDelta)]
    assert [type(d) for d in text] == [TextDelta] * 3 and [d.text for d in text] == [
        "Hel",
        "lo",
        ", you",
    ]
    assert text[0] == TextDelta("Hel") and hash(text[0]) == hash(TextDelta("Hel"))
    made = [e for e in events if e.type in DELTA_TYPES]
    assert [e.delta for e in made if e.type == EventType.TEXT_BLOCK_DELTA] == ["Hel", "lo", ", you"]
    assert len({e.id for e in events}) == len(events)
    for event in made:
        cls = DELTA_TYPES[event.type]
        validated = cls(
            reply_id="r1",
            block_id=event.block_id,
            delta=event.delta,
            id=event.id,
            created_at=event.created_at,
        )
        assert event.model_dump_json() == validated.model_dump_json()
        assert event.model_fields_set == {"reply_id", "block_id", "delta"}
        assert event_adapter.validate_json(event.model_dump_json()) == event
    block = assembler.blocks[0]
    assert isinstance(block, TextBlock) and block.text == "Hello, you"
    assert {e.block_id for e in made if e.type == EventType.TEXT_BLOCK_DELTA} == {block.id}


def _openai_chunks(deltas: list[dict]) -> Reply:
    def chunk(delta: dict, finish: str | None = None) -> bytes:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m"}
        return f"data: {json.dumps(body | {'choices': [choice]})}\n\n".encode()

    pieces = [chunk(d) for d in deltas] + [chunk({}, "stop"), b"data: [DONE]\n\n"]
    return Reply(pieces, content_type=SSE, path="/v1/chat/completions")


async def test_chat_chunks_with_more_than_text_take_the_full_path(server: ReplayServer) -> None:
    server.add(
        _openai_chunks(
            [
                {"content": "a", "token_ids": [1]},  # an unknown extra field: still text
                {"content": "b", "reasoning": "why"},  # vLLM's reasoning beside text
                {"content": "c", "reasoning_content": "so"},  # DeepSeek's
                {"content": ""},
                {"content": "d"},
            ]
        )
    )
    assembler, events, deltas = await run(
        make_model("openai", server.url), ChatRequest([UserMsg("user", "hi")])
    )
    server.assert_done()
    kinds = [(type(d).__name__, getattr(d, "text", None)) for d in deltas[:-1]]
    assert kinds == [
        ("TextDelta", "a"),
        ("ThinkingDelta", "why"),
        ("TextDelta", "b"),
        ("ThinkingDelta", "so"),
        ("TextDelta", "c"),
        ("TextDelta", "d"),
    ]
    texts = [b.text for b in assembler.blocks if isinstance(b, TextBlock)]
    thoughts = [b.thinking for b in assembler.blocks if isinstance(b, ThinkingBlock)]
    assert (texts, thoughts) == (["a", "b", "cd"], ["why", "so"])
