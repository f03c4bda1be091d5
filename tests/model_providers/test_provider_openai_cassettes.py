"""Every OpenAI cassette replayed through the `openai` SDK into tether blocks, events and usage."""

import json

import pytest
from provider_replay import ReplayServer

from tether.credential import OpenAICredential
from tether.errors import ModelResponseError
from tether.event import EventType
from tether.message import (
    AssistantMsg,
    SystemMsg,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ChatRequest, OpenAIChatModel, StreamAssembler

WEATHER_TOOL = {
    "name": "get_current_weather",
    "description": "Get the current weather in a given location",
    "parameters": {
        "type": "object",
        "properties": {"location": {"type": "string"}},
        "required": ["location"],
    },
}


def model(server: ReplayServer, name: str, *, stream: bool = True) -> OpenAIChatModel:
    return OpenAIChatModel(
        OpenAICredential(api_key="sk-test", base_url=server.url + "/v1"), name, stream=stream
    )


async def run(m: OpenAIChatModel, request: ChatRequest):
    assembler = StreamAssembler(reply_id="r1")
    events = []
    async for delta in m.stream(request):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events


@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_chat_stream_text(server: ReplayServer, mode: str) -> None:
    server.add_cassette("openai/chat_stream_text.yaml", mode)
    assembler, events = await run(
        model(server, "gpt-4"), ChatRequest([UserMsg("user", "Say this is a test")])
    )
    server.assert_done()
    assert [type(b) for b in assembler.blocks] == [TextBlock]
    text = assembler.blocks[0].text
    assert text.startswith('"This') and "test" in text
    types = [e.type for e in events]
    assert types[0] == EventType.TEXT_BLOCK_START and types[-1] == EventType.TEXT_BLOCK_END
    assert types.count(EventType.TEXT_BLOCK_DELTA) == 5
    assert assembler.usage is not None and assembler.usage.input_tokens > 0
    assert assembler.usage.output_tokens > 0
    sent = server.requests[0].json()
    assert sent["stream"] is True and sent["stream_options"] == {"include_usage": True}
    assert sent["messages"] == [{"role": "user", "content": "Say this is a test"}]


async def test_chat_stream_parallel_tool_calls(server: ReplayServer) -> None:
    server.add_cassette("openai/chat_stream_parallel_tool_calls.yaml")
    request = ChatRequest(
        [
            SystemMsg("system", "You're a helpful assistant."),
            UserMsg("user", "What's the weather in Seattle and San Francisco today?"),
        ],
        tools=[WEATHER_TOOL],
    )
    assembler, events = await run(model(server, "gpt-4o-mini"), request)
    server.assert_done()
    calls = [b for b in assembler.blocks if isinstance(b, ToolCallBlock)]
    assert len(calls) == 2
    assert calls[0].id == "call_fHCjJqt9Pysde6vcJcvbXGBx"
    assert all(c.name == "get_current_weather" for c in calls)
    locations = [json.loads(c.input)["location"] for c in calls]
    assert "Seattle" in locations[0] and "San Francisco" in locations[1]
    ends = [e for e in events if e.type == EventType.TOOL_CALL_END]
    assert [e.tool_call.id for e in ends] == [c.id for c in calls]
    deltas = [e for e in events if e.type == EventType.TOOL_CALL_DELTA]
    assert len(deltas) == 13  # 6 argument pieces for index 0, 7 for index 1
    assert assembler.usage is not None and assembler.usage.input_tokens > 0
    sent = server.requests[0].json()
    assert sent["tool_choice"] == "auto"
    assert sent["tools"][0]["function"]["name"] == "get_current_weather"


async def test_chat_stream_tool_call_then_text(server: ReplayServer) -> None:
    interactions = server.add_cassette("openai/chat_stream_tool_call_then_text.yaml")
    tool = {
        "name": "get_capital",
        "description": "",
        "parameters": {
            "additionalProperties": False,
            "properties": {"country": {"type": "string"}},
            "required": ["country"],
            "type": "object",
        },
    }
    user = UserMsg("user", "What is the capital of the UK? Use the tool, then answer.")
    m = model(server, "gpt-4o-mini")
    first, _ = await run(m, ChatRequest([user], tools=[tool]))
    (call,) = first.blocks
    assert isinstance(call, ToolCallBlock)
    assert call.name == "get_capital" and json.loads(call.input) == {"country": "UK"}
    assert first.usage is not None and first.usage.output_tokens > 0
    reply = AssistantMsg(
        "assistant", [call, ToolResultBlock(id=call.id, name=call.name, output="London")]
    )
    second, _ = await run(m, ChatRequest([user, reply], tools=[tool]))
    server.assert_done()
    assert [type(b) for b in second.blocks] == [TextBlock]
    assert "London" in second.blocks[0].text
    sent = server.requests[1].json()["messages"]
    recorded = interactions[1].request_body["messages"]
    assert sent[1]["tool_calls"] == recorded[1]["tool_calls"]
    assert sent[2] == recorded[2]


async def test_chat_parallel_tool_calls_nonstream(server: ReplayServer) -> None:
    interactions = server.add_cassette("openai/chat_parallel_tool_calls_nonstream.yaml")
    history = [
        SystemMsg("system", "You're a helpful assistant."),
        UserMsg("user", "What's the weather in Seattle and San Francisco today?"),
    ]
    m = model(server, "gpt-4o-mini", stream=False)
    first, events = await run(m, ChatRequest(history, tools=[WEATHER_TOOL]))
    calls = [b for b in first.blocks if isinstance(b, ToolCallBlock)]
    assert [c.id for c in calls] == [
        "call_JpNb8OiAkbIbHzDggfpdDHpi",
        "call_vaFQc3zK6hHTRZKXRI5Eo2cJ",
    ]
    assert len([e for e in events if e.type == EventType.TOOL_CALL_END]) == 2
    outputs = ["50 degrees and raining", "70 degrees and sunny"]
    reply = AssistantMsg(
        "assistant",
        [
            *calls,
            *(
                ToolResultBlock(id=c.id, name=c.name, output=o)
                for c, o in zip(calls, outputs, strict=True)
            ),
        ],
    )
    second, _ = await run(m, ChatRequest([*history, reply], tools=[WEATHER_TOOL]))
    server.assert_done()
    assert "Seattle" in second.blocks[0].text
    assert second.usage is not None and second.usage.input_tokens == 99
    sent = server.requests[1].json()["messages"]
    recorded = interactions[1].request_body["messages"]
    assert [m["role"] for m in sent] == [m["role"] for m in recorded]
    assert [c["id"] for c in sent[2]["tool_calls"]] == [c["id"] for c in recorded[2]["tool_calls"]]
    assert [m.get("tool_call_id") for m in sent[3:]] == [
        m.get("tool_call_id") for m in recorded[3:]
    ]
    assert server.requests[1].json()["stream"] is False


async def test_chat_error_400_unsupported_value(server: ReplayServer) -> None:
    server.add_cassette("openai/chat_error_400_unsupported_value.yaml")
    m = model(server, "o1-mini", stream=False)
    with pytest.raises(ModelResponseError) as caught:
        await run(
            m,
            ChatRequest(
                [SystemMsg("system", "You are a helpful assistant."), UserMsg("user", "Hello")]
            ),
        )
    server.assert_done()
    assert caught.value.status_code == 400
    assert "does not support 'system'" in str(caught.value)
    assert not m.is_retryable(caught.value)
