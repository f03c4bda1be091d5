"""DeepSeek (OpenAI-compatible, `reasoning_content`) and Ollama (NDJSON) cassettes."""

import json

import pytest
from provider_replay import ReplayServer

from tether.credential import OllamaCredential, OpenAICredential
from tether.event import EventType
from tether.message import (
    AssistantMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ChatRequest, OllamaChatModel, OpenAIChatModel, StreamAssembler
from tether.model.providers._chat_format import format_chat_messages
from tether.model.providers._turns import split_turns


async def run(m, request):
    assembler = StreamAssembler(reply_id="r1")
    events = []
    async for delta in m.stream(request):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events


def deepseek(server: ReplayServer, *, stream: bool = True) -> OpenAIChatModel:
    return OpenAIChatModel(
        OpenAICredential(api_key="sk-deep", base_url=server.url), "deepseek-reasoner", stream=stream
    )


@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_deepseek_stream_reasoning_content(server: ReplayServer, mode: str) -> None:
    server.add_cassette("deepseek/chat_stream_reasoning_content.yaml", mode)
    assembler, events = await run(deepseek(server), ChatRequest([UserMsg("user", "Hello")]))
    server.assert_done()
    thinking, text = assembler.blocks
    assert isinstance(thinking, ThinkingBlock) and isinstance(text, TextBlock)
    assert thinking.thinking.startswith("H") and len(thinking.thinking) > 100
    assert text.text.endswith("today?")
    types = [e.type for e in events]
    assert (
        types.count(EventType.THINKING_BLOCK_DELTA) == 198
    )  # plus a first, empty piece that opens nothing
    assert types.index(EventType.THINKING_BLOCK_END) < types.index(EventType.TEXT_BLOCK_START)
    usage = assembler.usage  # rides on the finish chunk; there is no usage-only chunk
    assert usage is not None and (
        usage.input_tokens,
        usage.output_tokens,
        usage.reasoning_tokens,
    ) == (6, 212, 198)
    assert server.requests[0].path == "/chat/completions"


async def test_deepseek_reasoning_content_nonstream(server: ReplayServer) -> None:
    server.add_cassette("deepseek/chat_reasoning_content_nonstream.yaml")
    assembler, _ = await run(
        deepseek(server, stream=False), ChatRequest([UserMsg("user", "How do I cross the street?")])
    )
    server.assert_done()
    thinking, text = assembler.blocks
    assert isinstance(thinking, ThinkingBlock) and len(thinking.thinking) > 1000
    assert isinstance(text, TextBlock) and text.text.startswith("Crossing the street safely")
    assert assembler.usage is not None and assembler.usage.reasoning_tokens == 415


def test_deepseek_reasoning_sent_back_with_tool_steps_only() -> None:
    call = ToolCallBlock(id="c1", name="lookup", input='{"q": "x"}')
    reply = AssistantMsg(
        "assistant",
        [
            ThinkingBlock(thinking="I should look it up."),
            call,
            ToolResultBlock(id="c1", name="lookup", output="42"),
            ThinkingBlock(thinking="Now answer."),
            TextBlock(text="It is 42."),
        ],
    )
    messages = format_chat_messages(split_turns([UserMsg("user", "q?"), reply]))
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert (
        messages[1]["reasoning_content"] == "I should look it up."
    )  # DeepSeek/Kimi require it here
    assert "reasoning_content" not in messages[3]  # a final answer's reasoning is not resent
    never = format_chat_messages(split_turns([UserMsg("user", "q?"), reply]), reasoning="never")
    assert all("reasoning_content" not in m for m in never)


@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_ollama_api_chat_stream(server: ReplayServer, mode: str) -> None:
    server.add_cassette("ollama/api_chat_stream.yaml", mode)
    m = OllamaChatModel(OllamaCredential(base_url=server.url), "llama3")
    assembler, events = await run(
        m, ChatRequest([UserMsg("user", "Tell me a joke about OpenTelemetry")])
    )
    server.assert_done()
    (block,) = assembler.blocks
    assert isinstance(block, TextBlock) and block.text.startswith("Why did the OpenTe")
    assert [e.type for e in events].count(
        EventType.TEXT_BLOCK_DELTA
    ) == 49  # the done line is empty
    assert assembler.usage is not None and (
        assembler.usage.input_tokens,
        assembler.usage.output_tokens,
    ) == (17, 50)
    sent = server.requests[0].json()
    assert sent["model"] == "llama3" and sent["stream"] is True
    assert sent["messages"] == [{"role": "user", "content": "Tell me a joke about OpenTelemetry"}]
    assert "authorization" not in server.requests[0].headers


async def test_ollama_api_chat_tool_result_history(server: ReplayServer) -> None:
    interactions = server.add_cassette("ollama/api_chat_tool_result_history.yaml")
    call = ToolCallBlock(
        id="call_1", name="get_current_weather", input=json.dumps({"location": "San Francisco"})
    )
    history = AssistantMsg(
        "assistant",
        [
            call,
            ToolResultBlock(
                id="call_1",
                name=call.name,
                output="The weather in San Francisco is 70 degrees and sunny.",
            ),
        ],
    )
    m = OllamaChatModel(OllamaCredential(base_url=server.url), "llama3.1", stream=False)
    assembler, events = await run(m, ChatRequest([history]))
    server.assert_done()
    (block,) = assembler.blocks
    assert isinstance(block, TextBlock) and block.text.startswith("This is a simple example")
    assert assembler.usage is not None and assembler.usage.output_tokens > 0
    sent = server.requests[0].json()["messages"]
    recorded = interactions[0].request_body["messages"]
    assert sent[0]["tool_calls"] == recorded[0]["tool_calls"]  # arguments as an object, no id
    assert sent[1]["role"] == "tool" and sent[1]["content"] == recorded[1]["content"]
    assert sent[1]["tool_name"] == "get_current_weather"
