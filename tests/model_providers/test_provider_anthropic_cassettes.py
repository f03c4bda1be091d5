"""Every Anthropic cassette replayed through the `anthropic` SDK."""

import json

import pytest
from provider_replay import ReplayServer

from tether.credential import AnthropicCredential
from tether.errors import ModelResponseError
from tether.event import EventType
from tether.message import (
    AssistantMsg,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import AnthropicChatModel, ChatRequest, StreamAssembler


def model(server: ReplayServer, name: str, **kwargs) -> AnthropicChatModel:
    # The recordings were made without cache markers: the requests are compared as sent.
    kwargs.setdefault("prompt_cache", False)
    return AnthropicChatModel(
        AnthropicCredential(api_key="sk-ant-test", base_url=server.url), name, **kwargs
    )


async def run(m, request):
    assembler = StreamAssembler(reply_id="r1")
    events = []
    async for delta in m.stream(request):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events


@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_messages_stream_text(server: ReplayServer, mode: str) -> None:
    server.add_cassette("anthropic/messages_stream_text.yaml", mode)
    m = model(server, "claude-3-haiku-20240307", max_tokens=1024)
    assembler, events = await run(
        m, ChatRequest([UserMsg("user", "Tell me a joke about OpenTelemetry")])
    )
    server.assert_done()
    (block,) = assembler.blocks
    assert isinstance(block, TextBlock) and block.text.startswith("Here's an OpenTelemet")
    assert [e.type for e in events].count(EventType.TEXT_BLOCK_DELTA) == 70
    assert assembler.usage is not None
    assert assembler.usage.input_tokens == 17 and assembler.usage.output_tokens > 3
    sent = server.requests[0].json()
    assert sent["max_tokens"] == 1024 and sent["stream"] is True
    assert sent["messages"] == [
        {
            "role": "user",
            "content": [{"type": "text", "text": "Tell me a joke about OpenTelemetry"}],
        }
    ]


@pytest.mark.filterwarnings("ignore:The model .* is deprecated:DeprecationWarning")
async def test_messages_stream_thinking_then_tool_use(server: ReplayServer) -> None:
    interactions = server.add_cassette("anthropic/messages_stream_thinking_then_tool_use.yaml")
    tool = {
        "name": "get_temperature",
        "description": "",
        "parameters": {
            "additionalProperties": False,
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "type": "object",
        },
    }
    user = UserMsg("user", "How warm is it in Utrecht? Use the tool, then answer.")
    m = model(server, "claude-sonnet-4-5", thinking=1024, max_tokens=4096)
    first, events = await run(m, ChatRequest([user], tools=[tool]))
    thinking, call = first.blocks
    assert isinstance(thinking, ThinkingBlock) and isinstance(call, ToolCallBlock)
    assert thinking.thinking.startswith("The user wants to know the temperature in Utrecht.")
    assert thinking.signature is not None and thinking.signature.startswith("EqsDCpQB")
    assert call.id == "toolu_01TUGHRCfso8VSw9ekt21nAR" and json.loads(call.input) == {
        "city": "Utrecht"
    }
    types = [e.type for e in events]
    assert types.index(EventType.THINKING_BLOCK_END) < types.index(EventType.TOOL_CALL_START)
    end = next(e for e in events if e.type == EventType.THINKING_BLOCK_END)
    assert end.signature == thinking.signature
    assert first.usage is not None and first.usage.reasoning_tokens == 45
    assert first.usage.input_tokens == 597 and first.usage.output_tokens == 101

    reply = AssistantMsg(
        "assistant",
        [
            thinking,
            call,
            ToolResultBlock(id=call.id, name=call.name, output=[TextBlock(text="18°C")]),
        ],
    )
    second, _ = await run(m, ChatRequest([user, reply], tools=[tool]))
    server.assert_done()
    assert isinstance(second.blocks[0], TextBlock) and "18" in second.blocks[0].text
    sent = server.requests[1].json()
    recorded = interactions[1].request_body
    assert sent["thinking"] == recorded["thinking"] == {"type": "enabled", "budget_tokens": 1024}
    assert sent["tool_choice"] == recorded["tool_choice"]
    assert sent["tools"] == recorded["tools"]
    assert [m["role"] for m in sent["messages"]] == ["user", "assistant", "user"]
    assert sent["messages"][1]["content"] == recorded["messages"][1]["content"]
    assert sent["messages"][2]["content"] == recorded["messages"][2]["content"]


async def test_messages_parallel_tool_use_nonstream(server: ReplayServer) -> None:
    interactions = server.add_cassette("anthropic/messages_parallel_tool_use_nonstream.yaml")
    recorded = interactions[0].request_body
    tools = [
        {"name": t["name"], "description": t["description"], "parameters": t["input_schema"]}
        for t in recorded["tools"]
    ]
    history = [
        SystemMsg("system", recorded["system"]),
        UserMsg("user", "Alice, Bob, Charlie and Daisy are a family. Who is the youngest?"),
    ]
    m = model(server, "claude-haiku-4-5", stream=False, max_tokens=4096)
    first, events = await run(m, ChatRequest(history, tools=tools))
    assert isinstance(first.blocks[0], TextBlock)
    calls = [b for b in first.blocks if isinstance(b, ToolCallBlock)]
    assert [json.loads(c.input)["name"] for c in calls] == ["Alice", "Bob", "Charlie", "Daisy"]
    assert len([e for e in events if e.type == EventType.TOOL_CALL_END]) == 4
    assert first.usage is not None and (first.usage.input_tokens, first.usage.output_tokens) == (
        423,
        202,
    )
    outputs = [
        "alice is bob's wife",
        "bob is alice's husband",
        "charlie is alice's son",
        "daisy is bob's daughter and charlie's younger sister",
    ]
    reply = AssistantMsg(
        "assistant",
        [
            *first.blocks,
            *(
                ToolResultBlock(id=c.id, name=c.name, output=o)
                for c, o in zip(calls, outputs, strict=True)
            ),
        ],
    )
    second, _ = await run(m, ChatRequest([*history, reply], tools=tools))
    server.assert_done()
    assert "Daisy" in second.blocks[0].text
    sent = server.requests[1].json()
    expected = interactions[1].request_body
    assert sent["system"] == expected["system"]
    assert sent["messages"] == expected["messages"]
    assert (
        sent["tool_choice"] == {"type": "auto"}
        and "stream" not in sent
        or sent.get("stream") is False
    )


async def test_messages_error_400_invalid_request(server: ReplayServer) -> None:
    server.add_cassette("anthropic/messages_error_400_invalid_request.yaml")
    m = model(
        server,
        "claude-opus-4-6",
        stream=False,
        max_tokens=4096,
        generate_kwargs={"extra_body": {"output_config": {"effort": "xhigh"}}},
    )
    with pytest.raises(ModelResponseError) as caught:
        await run(m, ChatRequest([UserMsg("user", "What is 2+2?")]))
    server.assert_done()
    assert caught.value.status_code == 400
    assert "does not support effort level 'xhigh'" in str(caught.value)
    assert server.requests[0].json()["output_config"] == {"effort": "xhigh"}
