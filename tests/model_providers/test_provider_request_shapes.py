"""Message shapes the APIs refuse, sent so they accept them: arguments that are not JSON, call
ids and tool names from elsewhere, and the ways tool calls arrive out of the ordinary."""

import json
import re

import pytest
from provider_replay import ReplayServer, Reply
from provider_wire import SSE, make_model, stream_reply

from tether.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    TextBlock,
    ToolCallBlock,
    ToolResultBlock,
    URLSource,
    UserMsg,
)
from tether.model import ChatRequest, NamedToolChoice, StreamAssembler

TOOL = {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}}
SAFE_ID = re.compile(r"[A-Za-z0-9_-]{1,40}")


def sent_calls_and_results(provider: str, body: dict) -> tuple[list[dict], list[str]]:
    """The tool calls (id, name, arguments) and result ids a request carried."""
    if provider == "anthropic":
        blocks = [b for m in body["messages"] for b in m["content"] if isinstance(b, dict)]
        calls = [
            {"id": b["id"], "name": b["name"], "arguments": json.dumps(b["input"])}
            for b in blocks
            if b["type"] == "tool_use"
        ]
        return calls, [b["tool_use_id"] for b in blocks if b["type"] == "tool_result"]
    if provider == "gemini":
        parts = [p for c in body["contents"] for p in c["parts"]]
        calls = [
            {"id": p["functionCall"].get("id"), "name": p["functionCall"]["name"]}
            for p in parts
            if "functionCall" in p
        ]
        return calls, [p["functionResponse"].get("id") for p in parts if "functionResponse" in p]
    messages = body["input"]["messages"] if provider == "dashscope" else body["messages"]
    calls = [
        {"id": c["id"], **c["function"]}
        for m in messages
        if m["role"] == "assistant"
        for c in m.get("tool_calls") or ()
    ]
    return calls, [m["tool_call_id"] for m in messages if m["role"] == "tool"]


async def send(server: ReplayServer, provider: str, request: ChatRequest, reply=None):
    server.add(reply or stream_reply(provider, [("text", "ok")]))
    assembler = StreamAssembler(reply_id="r1", emit=False)
    async for delta in make_model(provider, server.url).stream(request):
        assembler.feed(delta)
    assembler.close()
    return assembler.blocks, server.requests[-1].json()


def history(*calls: ToolCallBlock) -> list:
    results = [ToolResultBlock(id=c.id, name=c.name, output="done") for c in calls]
    return [UserMsg("user", "go"), AssistantMsg("assistant", [*calls, *results])]


@pytest.mark.parametrize("provider", ["openai", "dashscope"])
async def test_arguments_that_are_not_json_go_back_as_an_empty_object(
    server: ReplayServer, provider: str
) -> None:
    # The model's call was cut mid-arguments; the agent answered it with an error result.
    # DashScope rejects the whole next request if `function.arguments` is not JSON.
    cut = ToolCallBlock(id="call_1", name="get_weather", input='{"city": "Par')
    fine = ToolCallBlock(id="call_2", name="get_weather", input='{"city": "Rome"}')
    not_object = ToolCallBlock(id="call_3", name="get_weather", input="[1, 2]")
    _, body = await send(server, provider, ChatRequest(history(cut, fine, not_object), [TOOL]))
    server.assert_done()
    calls, _ = sent_calls_and_results(provider, body)
    assert [c["arguments"] for c in calls] == ["{}", '{"city": "Rome"}', "{}"]


VLLM_ID = "chatcmpl-tool-" + "0123456789abcdef" * 2  # 46 characters
KIMI_ID = "functions.get_weather:0"


@pytest.mark.parametrize("provider", ["openai", "anthropic", "dashscope"])
async def test_call_ids_from_other_providers_are_sent_as_safe_stable_stand_ins(
    server: ReplayServer, provider: str
) -> None:
    calls = [
        ToolCallBlock(id=VLLM_ID, name="get_weather", input="{}"),
        ToolCallBlock(id=KIMI_ID, name="get_weather", input="{}"),
        ToolCallBlock(id="call_plain", name="get_weather", input="{}"),
    ]
    request = ChatRequest(history(*calls), [TOOL])
    _, first = await send(server, provider, request)
    _, second = await send(server, provider, request)
    server.assert_done()
    sent, results = sent_calls_and_results(provider, first)
    ids = [c["id"] for c in sent]
    assert all(SAFE_ID.fullmatch(i) for i in ids), ids
    assert ids[2] == "call_plain"  # ids the API takes are left alone
    assert len(set(ids)) == 3 and results == ids  # each result still answers its call
    assert sent_calls_and_results(provider, second)[0] == sent  # the same on every request


@pytest.mark.parametrize(
    ("provider", "name"),
    [
        ("openai", "web.search"),
        ("anthropic", "web.search"),
        ("dashscope", "web search"),
        ("gemini", "3d-render"),  # Gemini allows dots, but a name must start with a letter
    ],
)
async def test_a_tool_name_the_api_refuses_is_sent_safe_and_mapped_back(
    server: ReplayServer, provider: str, name: str
) -> None:
    tool = {**TOOL, "name": name}
    old_call = ToolCallBlock(id="call_old", name=name, input='{"q": "a"}')
    request = ChatRequest(history(old_call), [tool], tool_choice=NamedToolChoice(name))
    _, body = await send(server, provider, request)
    if provider == "anthropic":
        (sent_tool,) = [t["name"] for t in body["tools"]]
        choice = body["tool_choice"]["name"]
    elif provider == "gemini":
        (sent_tool,) = [d["name"] for d in body["tools"][0]["functionDeclarations"]]
        (choice,) = body["toolConfig"]["functionCallingConfig"]["allowedFunctionNames"]
    else:
        params = body["parameters"] if provider == "dashscope" else body
        (sent_tool,) = [t["function"]["name"] for t in params["tools"]]
        choice = params["tool_choice"]["function"]["name"]
    allowed = r"[A-Za-z_][A-Za-z0-9_.:-]{0,63}" if provider == "gemini" else r"[A-Za-z0-9_-]{1,64}"
    assert re.fullmatch(allowed, sent_tool) and sent_tool != name
    assert choice == sent_tool
    assert sent_calls_and_results(provider, body)[0][0]["name"] == sent_tool

    # The model calls the name it was given; the call comes back with the toolkit's name.
    script = [("call", 0, "call_new", sent_tool), ("args", 0, '{"q": "b"}')]
    blocks, _ = await send(server, provider, request, stream_reply(provider, script))
    server.assert_done()
    (call,) = blocks
    assert isinstance(call, ToolCallBlock) and call.name == name


def _openai_chunk(calls: list[dict]) -> bytes:
    choice = {"index": 0, "delta": {"tool_calls": calls}, "finish_reason": None}
    body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
    return f"data: {json.dumps({**body, 'choices': [choice]})}\n\n".encode()


def _call(index: int, call_id: str | None, name: str | None, args: str) -> dict:
    call: dict = {"index": index, "function": {"arguments": args}}
    if call_id is not None:
        call |= {"id": call_id, "type": "function"}
        call["function"]["name"] = name
    return call


async def test_duplicated_and_out_of_order_tool_call_indices(server: ReplayServer) -> None:
    end = stream_reply("openai", [("call", 0, "x", "y")]).pieces()[-2:]  # finish + [DONE]
    pieces = [
        _openai_chunk([_call(1, "call_b", "get_weather", "")]),  # index 1 comes first
        _openai_chunk([_call(0, "call_a", "get_weather", '{"city": ')]),
        _openai_chunk([_call(1, None, None, '{"city": "Rome"}')]),
        _openai_chunk([_call(0, "call_a", "get_weather", "")]),  # a repeated start (Qwen)
        _openai_chunk([_call(0, None, None, '"Paris"}')]),
        _openai_chunk([_call(2, "call_a", "get_weather", '{"city": "Oslo"}')]),  # id reused
        *end,
    ]
    blocks, _ = await send(
        server,
        "openai",
        ChatRequest([UserMsg("user", "go")], [TOOL]),
        Reply(pieces, content_type=SSE),
    )
    server.assert_done()
    calls = [b for b in blocks if isinstance(b, ToolCallBlock)]
    assert [json.loads(c.input)["city"] for c in calls] == ["Rome", "Paris", "Oslo"]
    assert calls[0].id == "call_b" and calls[1].id == "call_a"
    assert len({c.id for c in calls}) == 3  # a reused id would pair two results with one call


async def test_ollama_names_the_url_images_of_a_tool_result(server: ReplayServer) -> None:
    png = "iVBORw0KGgo="
    result = ToolResultBlock(
        id="c1",
        name="shot",
        output=[
            TextBlock(text="two images"),
            DataBlock(source=Base64Source(media_type="image/png", data=png)),
            DataBlock(source=URLSource(url="https://example.com/b.png")),
        ],
    )
    call = ToolCallBlock(id="c1", name="shot", input="{}")
    msgs = [UserMsg("user", "go"), AssistantMsg("assistant", [call, result])]
    _, body = await send(server, "ollama", ChatRequest(msgs))
    server.assert_done()
    (tool,) = [m for m in body["messages"] if m["role"] == "tool"]
    assert tool["images"] == [png]
    assert "https://example.com/b.png" in tool["content"]  # not dropped without a word


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny in {city}"


@pytest.mark.parametrize("provider", ["openai", "anthropic", "dashscope"])
async def test_a_call_cut_by_the_token_limit_gets_an_error_result_and_the_reply_goes_on(
    server: ReplayServer, provider: str
) -> None:
    from tether.agent import Agent
    from tether.tool import Toolkit

    cut = [
        ("call", 0, "call_w", "get_weather"),
        ("args", 0, '{"city": "Par'),  # the arguments are never closed
        ("stop", {"anthropic": "max_tokens"}.get(provider, "length")),
    ]
    server.add(stream_reply(provider, cut), stream_reply(provider, [("text", "Sorry.")]))
    agent = Agent(
        name="a",
        system_prompt="s",
        model=make_model(provider, server.url),
        toolkit=Toolkit(tools=[get_weather]),
    )
    final = await agent.reply(UserMsg("user", "weather?"))
    server.assert_done()
    (result,) = final.get_content_blocks(ToolResultBlock)
    assert result.state == "error" and "not valid JSON" in result.get_text()
    assert final.get_text_content("") == "Sorry."
    calls, results = sent_calls_and_results(provider, server.requests[1].json())
    assert json.loads(calls[0]["arguments"]) == {}  # valid JSON, so the API takes the request
    assert results == [calls[0]["id"]]
