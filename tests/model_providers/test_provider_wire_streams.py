"""Hand-built streams in each provider's published format: split arguments, parallel calls,
usage in a last chunk, thinking before a tool call (and sent back on the next request)."""

import json

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, make_model, stream_reply

from tether.event import EventType
from tether.message import AssistantMsg, ThinkingBlock, ToolCallBlock, ToolResultBlock, UserMsg
from tether.model import ChatRequest, StreamAssembler

TOOL = {
    "name": "get_weather",
    "description": "Weather in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string"}, "unit": {"type": "string"}},
        "required": ["city"],
    },
}
ARGS = '{"city": "Paris", "unit": "celsius"}'


async def run(m, request):
    assembler = StreamAssembler(reply_id="r1")
    events = []
    async for delta in m.stream(request):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events


def pieces(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


@pytest.mark.parametrize("provider", ["openai", "anthropic", "dashscope"])
async def test_tool_call_arguments_split_over_many_chunks(
    server: ReplayServer, provider: str
) -> None:
    split = pieces(ARGS, 2)  # 18 pieces, cutting keys, values and escapes apart
    script = [("call", 0, "call_w1", "get_weather"), *(("args", 0, p) for p in split)]
    server.add(stream_reply(provider, script))
    assembler, events = await run(
        make_model(provider, server.url), ChatRequest([UserMsg("user", "weather?")], tools=[TOOL])
    )
    server.assert_done()
    (call,) = assembler.blocks
    assert isinstance(call, ToolCallBlock)
    assert (call.id, call.name) == ("call_w1", "get_weather")
    assert json.loads(call.input) == {"city": "Paris", "unit": "celsius"}
    assert [e.delta for e in events if e.type == EventType.TOOL_CALL_DELTA] == split
    (end,) = [e for e in events if e.type == EventType.TOOL_CALL_END]
    assert end.tool_call.input == ARGS


@pytest.mark.parametrize("provider", ["openai", "dashscope"])
async def test_two_parallel_calls_interleaved(server: ReplayServer, provider: str) -> None:
    first, second = pieces('{"city": "Paris"}', 3), pieces('{"city": "Tokyo", "unit": "kelvin"}', 4)
    script: list[tuple] = [
        ("call", 0, "call_p", "get_weather"),
        ("call", 1, "call_t", "get_weather"),
    ]
    for i in range(max(len(first), len(second))):
        if i < len(first):
            script.append(("args", 0, first[i]))
        if i < len(second):
            script.append(("args", 1, second[i]))
    server.add(stream_reply(provider, script))
    assembler, events = await run(
        make_model(provider, server.url), ChatRequest([UserMsg("user", "two cities")], tools=[TOOL])
    )
    server.assert_done()
    calls = [b for b in assembler.blocks if isinstance(b, ToolCallBlock)]
    assert [c.id for c in calls] == ["call_p", "call_t"]
    assert json.loads(calls[0].input) == {"city": "Paris"}
    assert json.loads(calls[1].input) == {"city": "Tokyo", "unit": "kelvin"}
    deltas = [(e.block_id, e.delta) for e in events if e.type == EventType.TOOL_CALL_DELTA]
    assert deltas[:2] == [("call_p", first[0]), ("call_t", second[0])]  # interleaved as sent


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_usage_in_a_final_chunk_of_its_own(server: ReplayServer, provider: str) -> None:
    server.add(
        stream_reply(provider, [("text", "Hello"), ("text", " there"), ("usage", 42, 7, 30)])
    )
    assembler, events = await run(
        make_model(provider, server.url), ChatRequest([UserMsg("user", "hi")])
    )
    server.assert_done()
    assert assembler.blocks[0].text == "Hello there"
    usage = assembler.usage
    assert (
        usage is not None
        and (usage.input_tokens, usage.output_tokens) == (42, 7)
        or provider == "anthropic"
    )
    if provider == "anthropic":  # cache reads count as input too
        assert (usage.input_tokens, usage.output_tokens, usage.cache_read_tokens) == (72, 7, 30)
    if provider in ("openai", "gemini"):
        assert usage.cache_read_tokens == 30
    assert [e.type for e in events][-1] == EventType.TEXT_BLOCK_END


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_thinking_then_tool_call_and_sent_back(server: ReplayServer, provider: str) -> None:
    signature = "c2lnbmF0dXJlLWJ5dGVz"  # base64 of b"signature-bytes"
    script = [
        ("thinking", "The user wants weather; "),
        ("thinking", "I will call the tool."),
        ("signature", signature),
        ("call", 0, "call_th", "get_weather"),
        ("args", 0, '{"city": '),
        ("args", 0, '"Oslo"}'),
        ("usage", 20, 30),
    ]
    server.add(
        stream_reply(provider, script),
        stream_reply(provider, [("text", "It is cold."), ("usage", 40, 4)]),
    )
    kwargs = {"thinking": True} if provider != "openai" else {}
    m = make_model(provider, server.url, **kwargs)
    user = UserMsg("user", "Weather in Oslo?")
    first, events = await run(m, ChatRequest([user], tools=[TOOL]))
    thinking, call = first.blocks
    assert (
        isinstance(thinking, ThinkingBlock)
        and thinking.thinking == "The user wants weather; I will call the tool."
    )
    assert isinstance(call, ToolCallBlock) and json.loads(call.input) == {"city": "Oslo"}
    types = [e.type for e in events]
    assert types.index(EventType.THINKING_BLOCK_END) < types.index(EventType.TOOL_CALL_START)
    if provider == "anthropic":
        assert thinking.signature == signature
    if provider == "gemini":
        assert call.metadata["thought_signature"] == signature

    reply = AssistantMsg(
        "assistant", [thinking, call, ToolResultBlock(id=call.id, name=call.name, output="-3°C")]
    )
    second, _ = await run(m, ChatRequest([user, reply], tools=[TOOL]))
    server.assert_done()
    assert second.blocks[0].text == "It is cold."
    assert_sent_back(provider, server.requests[1].json(), thinking.thinking, signature)


def assert_sent_back(provider: str, sent: dict, thinking: str, signature: str) -> None:
    """The second request carries the reasoning (and its signature) as the provider wants it."""
    if provider == "openai":
        assistant = sent["messages"][1]
        assert (
            assistant["reasoning_content"] == thinking
            and assistant["tool_calls"][0]["id"] == "call_th"
        )
        assert sent["messages"][2] == {"role": "tool", "tool_call_id": "call_th", "content": "-3°C"}
    elif provider == "anthropic":
        assert sent["messages"][1]["content"][0] == {
            "type": "thinking",
            "thinking": thinking,
            "signature": signature,
        }
        assert sent["messages"][2]["content"][0]["tool_use_id"] == "call_th"
    elif provider == "gemini":
        part = sent["contents"][1]["parts"][0]
        assert part["functionCall"]["name"] == "get_weather" and part["thoughtSignature"].rstrip(
            "="
        ) == signature.rstrip("=")
    elif provider == "dashscope":
        assistant = sent["input"]["messages"][1]
        assert assistant["reasoning_content"] == thinking
        assert sent["input"]["messages"][2]["tool_call_id"] == "call_th"
        assert sent["parameters"]["enable_thinking"] is True
    else:
        assistant = sent["messages"][1]
        assert assistant["thinking"] == thinking
        assert assistant["tool_calls"] == [
            {"function": {"name": "get_weather", "arguments": {"city": "Oslo"}}}
        ]
        assert sent["think"] is True


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_multibyte_text_cut_mid_character(server: ReplayServer, provider: str) -> None:
    reply = stream_reply(provider, [("text", "北京今天 21°C，"), ("text", "晴 🌤"), ("usage", 9, 4)])
    whole = b"".join(reply.pieces())
    reply.body = [whole[i : i + 3] for i in range(0, len(whole), 3)]  # cuts UTF-8 sequences apart
    server.add(reply)
    assembler, _ = await run(
        make_model(provider, server.url), ChatRequest([UserMsg("user", "天气?")])
    )
    server.assert_done()
    assert assembler.blocks[0].text == "北京今天 21°C，晴 🌤"


DASHSCOPE_WHOLE = {
    "output": {
        "choices": [
            {
                "finish_reason": "tool_calls",
                "message": {
                    "role": "assistant",
                    "content": "",
                    "reasoning_content": "Need the weather.",
                    "tool_calls": [
                        {
                            "index": 0,
                            "id": "call_a",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"city": "Paris"}',
                            },
                        },
                        {
                            "index": 1,
                            "id": "call_b",
                            "type": "function",
                            "function": {
                                "name": "get_weather",
                                "arguments": '{"city": "Rome"}',
                            },
                        },
                    ],
                },
            }
        ]
    },
    "usage": {
        "input_tokens": 30,
        "output_tokens": 12,
        "total_tokens": 42,
        "output_tokens_details": {"reasoning_tokens": 5},
    },
    "request_id": "req-ns",
}


async def test_dashscope_non_streaming_tool_call(server: ReplayServer) -> None:
    from provider_replay import Reply

    server.add(
        Reply(
            json.dumps(DASHSCOPE_WHOLE).encode(),
            path="/api/v1/services/aigc/text-generation/generation",
        )
    )
    model = make_model("dashscope", server.url, stream=False, thinking=1024)
    assembler, events = await run(model, ChatRequest([UserMsg("user", "weather?")], tools=[TOOL]))
    server.assert_done()
    thinking, *calls = assembler.blocks
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking == "Need the weather."
    assert [(c.id, json.loads(c.input)["city"]) for c in calls] == [
        ("call_a", "Paris"),
        ("call_b", "Rome"),
    ]
    assert assembler.usage is not None and assembler.usage.reasoning_tokens == 5
    sent = server.requests[0]
    assert "x-dashscope-sse" not in sent.headers
    params = sent.json()["parameters"]
    assert params["enable_thinking"] is True and params["thinking_budget"] == 1024
    assert "incremental_output" not in params
