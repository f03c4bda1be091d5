"""Every Gemini cassette replayed through the `google-genai` SDK."""

import base64
import json

import pytest
from provider_replay import ReplayServer

from tether.credential import GeminiCredential
from tether.errors import ModelResponseError
from tether.event import EventType
from tether.message import (
    AssistantMsg,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.model import ChatRequest, GeminiChatModel, NamedToolChoice, StreamAssembler

CAPITAL = {
    "name": "get_capital",
    "description": "Get the capital of a country.",
    "parameters": {
        "type": "object",
        "properties": {"country": {"type": "string", "description": "The country name."}},
        "required": ["country"],
    },
}
TEMPERATURE = {
    "name": "get_temperature",
    "description": "Get the temperature in a city.",
    "parameters": {
        "type": "object",
        "properties": {"city": {"type": "string", "description": "The city name."}},
        "required": ["city"],
    },
}


def model(server: ReplayServer, name: str, **kwargs) -> GeminiChatModel:
    return GeminiChatModel(GeminiCredential(api_key="g-test", base_url=server.url), name, **kwargs)


async def run(m, request):
    assembler = StreamAssembler(reply_id="r1")
    events = []
    async for delta in m.stream(request):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events


def urlsafe_equal(sent: str, stored: str) -> bool:
    return base64.urlsafe_b64decode(sent + "=" * (-len(sent) % 4)) == base64.b64decode(stored)


@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_stream_text(server: ReplayServer, mode: str) -> None:
    server.add_cassette("gemini/stream_text.yaml", mode)
    m = model(server, "gemini-2.0-flash-exp", generate_kwargs={"temperature": 0.0})
    request = ChatRequest(
        [
            SystemMsg("system", "You are a helpful chatbot."),
            UserMsg("user", "What is the capital of France?"),
        ]
    )
    assembler, events = await run(m, request)
    server.assert_done()
    (block,) = assembler.blocks
    assert isinstance(block, TextBlock) and block.text == "The capital of France is Paris.\n"
    assert [e.type for e in events].count(EventType.TEXT_BLOCK_DELTA) == 3
    assert (
        assembler.usage is not None and assembler.usage.input_tokens == 13
    )  # the last event's count wins
    assert assembler.usage.output_tokens > 0
    sent = server.requests[0]
    assert (
        sent.path == "/v1beta/models/gemini-2.0-flash-exp:streamGenerateContent"
        and sent.query == "alt=sse"
    )
    body = sent.json()
    assert body["systemInstruction"]["parts"] == [{"text": "You are a helpful chatbot."}]
    assert body["contents"] == [
        {"parts": [{"text": "What is the capital of France?"}], "role": "user"}
    ]
    assert body["generationConfig"] == {"temperature": 0.0}
    assert sent.headers["x-goog-api-key"] == "g-test"


async def test_stream_function_call(server: ReplayServer) -> None:
    interactions = server.add_cassette("gemini/stream_function_call.yaml")
    m = model(server, "gemini-2.0-flash")
    tools = [CAPITAL, TEMPERATURE]
    history = [
        SystemMsg("system", "You are a helpful chatbot."),
        UserMsg("user", "What is the temperature of the capital of France?"),
    ]
    first, events = await run(m, ChatRequest(history, tools=tools))
    (call1,) = first.blocks
    assert isinstance(call1, ToolCallBlock) and call1.name == "get_capital"
    assert (
        json.loads(call1.input) == {"country": "France"} and call1.id
    )  # Gemini sends no id; tether makes one
    assert [e.type for e in events] == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_END,
    ]
    reply = AssistantMsg(
        "assistant", [call1, ToolResultBlock(id=call1.id, name=call1.name, output="Paris")]
    )
    second, _ = await run(m, ChatRequest([*history, reply], tools=tools))
    (call2,) = second.blocks
    assert isinstance(call2, ToolCallBlock) and json.loads(call2.input) == {"city": "Paris"}
    reply.content += [call2, ToolResultBlock(id=call2.id, name=call2.name, output="30°C")]
    third, _ = await run(m, ChatRequest([*history, reply], tools=tools))
    server.assert_done()
    assert third.blocks[0].text == "The temperature in Paris is 30°C.\n"
    assert third.usage is not None and third.usage.input_tokens == 79  # the last usage wins
    contents = server.requests[2].json()["contents"]
    recorded = interactions[2].request_body["contents"]
    assert [c["role"] for c in contents] == [c["role"] for c in recorded]
    assert contents[1]["parts"][0]["functionCall"] == {
        "args": {"country": "France"},
        "id": call1.id,
        "name": "get_capital",
    }
    assert contents[2]["parts"][0]["functionResponse"] == {
        "id": call1.id,
        "name": "get_capital",
        "response": {"output": "Paris"},
    }
    assert contents[4]["parts"][0]["functionResponse"]["response"] == {"output": "30°C"}
    declared = server.requests[0].json()["tools"][0]["functionDeclarations"]
    assert [d["name"] for d in declared] == ["get_capital", "get_temperature"]


async def test_generate_content_function_call_signatures(server: ReplayServer) -> None:
    interactions = server.add_cassette("gemini/generate_content_function_call.yaml")
    m = model(server, "gemini-2.5-pro", stream=False)
    history = [
        SystemMsg("system", "You are a helpful chatbot."),
        UserMsg("user", "What is the capital of France?"),
    ]
    first, _ = await run(m, ChatRequest(history, tools=[CAPITAL]))
    (call1,) = first.blocks
    assert isinstance(call1, ToolCallBlock)
    signature1 = call1.metadata["thought_signature"]
    assert base64.b64decode(signature1).startswith(base64.b64decode("CpYEAXLI"))
    assert first.usage is not None and first.usage.reasoning_tokens == 124
    error = ToolResultBlock(
        id=call1.id,
        name=call1.name,
        output='The country is not supported. Use "La France" instead.',
        state=ToolResultState.ERROR,
    )
    reply = AssistantMsg("assistant", [call1, error])
    second, _ = await run(m, ChatRequest([*history, reply], tools=[CAPITAL]))
    (call2,) = second.blocks
    assert (
        json.loads(call2.input) == {"country": "La France"}
        and "thought_signature" in call2.metadata
    )
    reply.content += [call2, ToolResultBlock(id=call2.id, name=call2.name, output="Paris")]
    third, events = await run(m, ChatRequest([*history, reply], tools=[CAPITAL]))
    server.assert_done()
    thinking, text = third.blocks  # the final text part's signature rides on a thinking block
    assert isinstance(thinking, ThinkingBlock) and thinking.thinking == "" and thinking.signature
    assert isinstance(text, TextBlock) and text.text == "Paris"
    sent = server.requests[1].json()["contents"]
    recorded = interactions[1].request_body["contents"]
    assert urlsafe_equal(sent[1]["parts"][0]["thoughtSignature"], signature1)
    assert sent[1]["parts"][0]["thoughtSignature"] == recorded[1]["parts"][0]["thoughtSignature"]
    assert sent[2]["parts"][0]["functionResponse"]["response"] == {
        "error": "Error: " + error.output
    }
    # The final answer's signature goes back on the text part when the reply is resent.
    reply.content += third.blocks
    _, contents = __import__("tether.model.providers._gemini_format", fromlist=["x"]).format_gemini(
        __import__("tether.model.providers._turns", fromlist=["x"]).split_turns([*history, reply])
    )
    assert contents[-1].parts[-1].text == "Paris" and contents[-1].parts[-1].thought_signature


async def test_generate_content_parallel_function_calls(server: ReplayServer) -> None:
    interactions = server.add_cassette("gemini/generate_content_parallel_function_calls.yaml")
    recorded = interactions[0].request_body
    tools = [
        {
            "name": d["name"],
            "description": d["description"],
            "parameters": d["parameters_json_schema"],
        }
        for d in recorded["tools"][0]["functionDeclarations"]
    ]
    m = model(server, "gemini-3-flash-preview", stream=False)
    history = [
        SystemMsg("system", "Tell three jokes. Generate topics with the generate_topic tool."),
        UserMsg("user", ""),
    ]
    request = ChatRequest(history, tools=tools, tool_choice="required")
    first, events = await run(m, request)
    calls = [b for b in first.blocks if isinstance(b, ToolCallBlock)]
    assert [c.name for c in calls] == ["generate_topic"] * 3
    assert len({c.id for c in calls}) == 3
    assert "thought_signature" in calls[0].metadata
    assert (
        "thought_signature" not in calls[1].metadata
        and "thought_signature" not in calls[2].metadata
    )
    assert len([e for e in events if e.type == EventType.TOOL_CALL_END]) == 3
    sent = server.requests[0].json()
    assert sent["toolConfig"]["functionCallingConfig"]["mode"] == "ANY"
    reply = AssistantMsg(
        "assistant",
        [
            *calls,
            *(
                ToolResultBlock(id=c.id, name=c.name, output=t)
                for c, t in zip(calls, ["cars", "penguins", "wheels"], strict=True)
            ),
        ],
    )
    last = None
    for _ in range(4):
        step, _ = await run(m, ChatRequest([*history, reply], tools=tools, tool_choice="required"))
        (call,) = step.blocks
        last = call
        if call.name == "final_result":
            break
        reply.content += [call, ToolResultBlock(id=call.id, name=call.name, output="more")]
    server.assert_done()
    assert last is not None and last.name == "final_result"
    assert len(json.loads(last.input)["response"]) == 3
    second = server.requests[1].json()["contents"]
    assert [len(c["parts"]) for c in second[:3]] == [1, 3, 3]
    assert (
        "thoughtSignature" in second[1]["parts"][0]
        and "thoughtSignature" not in second[1]["parts"][1]
    )


def test_named_tool_choice_restricts_allowed_functions() -> None:
    request = ChatRequest(
        [UserMsg("user", "go")], tools=[CAPITAL], tool_choice=NamedToolChoice("get_capital")
    )
    params = GeminiChatModel(GeminiCredential(api_key="k"), "gemini-2.5-flash").build_params(
        request
    )
    config = params["config"].tool_config.function_calling_config
    assert config.mode == "ANY" and config.allowed_function_names == ["get_capital"]


async def test_generate_content_error_404(server: ReplayServer) -> None:
    server.add_cassette("gemini/generate_content_error_404_model_not_found.yaml")
    m = model(server, "gemini-3.6-flahs", stream=False)
    with pytest.raises(ModelResponseError) as caught:
        await run(m, ChatRequest([UserMsg("user", "hello")]))
    server.assert_done()
    assert caught.value.status_code == 404
    assert "models/gemini-3.6-flahs is not found" in str(caught.value)
    assert not m.is_retryable(caught.value)
