"""One reply holding several model steps becomes the turns each API wants."""

import json

import pytest
from provider_wire import make_model
from pydantic import BaseModel

from tether import Agent
from tether.errors import UnknownProviderError
from tether.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    URLSource,
    UserMsg,
)
from tether.model import ChatRequest, NamedToolChoice, ScriptedChatModel, from_string
from tether.model.providers._turns import split_turns

URL = "http://127.0.0.1:9"
TOOL = {
    "name": "lookup",
    "description": "Look up.",
    "parameters": {"type": "object", "properties": {"q": {"type": "string"}}},
}
PNG = DataBlock(source=Base64Source(media_type="image/png", data="iVBORw0KGgo="))


def call(i: int) -> ToolCallBlock:
    return ToolCallBlock(id=f"c{i}", name="lookup", input=json.dumps({"q": str(i)}))


def result(i: int, **kw) -> ToolResultBlock:
    return ToolResultBlock(id=f"c{i}", name="lookup", output=f"r{i}", **kw)


def conversation() -> list:
    reply = AssistantMsg(
        "assistant",
        [
            ThinkingBlock(thinking="plan", signature="c2ln"),
            TextBlock(text="Let me look."),
            call(1),
            call(2),
            result(1),
            result(2, state=ToolResultState.ERROR),
            TextBlock(text="One more."),
            call(3),
            result(3),
            TextBlock(text="Done."),
        ],
    )
    return [
        SystemMsg("system", "Be brief."),
        UserMsg("user", [TextBlock(text="Look at this"), PNG]),
        reply,
        UserMsg("user", "thanks"),
    ]


def test_split_turns_of_a_multi_step_reply() -> None:
    turns = split_turns(conversation())
    assert [t.role for t in turns] == [
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert [type(b).__name__ for b in turns[2].blocks] == [
        "ThinkingBlock",
        "TextBlock",
        "ToolCallBlock",
        "ToolCallBlock",
    ]
    assert [r.id for r in turns[3].results] == ["c1", "c2"]
    assert [c.id for c in turns[4].calls] == ["c3"]


def test_missing_result_gets_a_placeholder_and_hints_become_user_text() -> None:
    reply = AssistantMsg(
        "assistant", [call(1), HintBlock(hint="Max iterations reached; answer now.")]
    )
    turns = split_turns([UserMsg("user", "q"), reply])
    assert [t.role for t in turns] == ["user", "assistant", "tool", "user"]
    (placeholder,) = turns[2].results
    assert placeholder.id == "c1" and placeholder.state is ToolResultState.INTERRUPTED
    assert turns[3].text() == "Max iterations reached; answer now."


def test_openai_messages() -> None:
    params = make_model("openai", URL).build_params(ChatRequest(conversation(), tools=[TOOL]))
    messages = params["messages"]
    assert [m["role"] for m in messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert messages[1]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="},
    }
    assert messages[2]["content"] == "Let me look." and [
        c["id"] for c in messages[2]["tool_calls"]
    ] == ["c1", "c2"]
    assert messages[4] == {"role": "tool", "tool_call_id": "c2", "content": "Error: r2"}
    assert messages[7] == {"role": "assistant", "content": "Done."}
    assert params["tool_choice"] == "auto" and params["tools"][0]["function"]["name"] == "lookup"


def test_anthropic_messages_alternate_and_keep_signatures() -> None:
    model = make_model("anthropic", URL, prompt_cache=False)  # the shape without cache markers
    params = model.build_params(ChatRequest(conversation(), tools=[TOOL]))
    assert params["system"] == "Be brief."
    messages = params["messages"]
    assert [m["role"] for m in messages] == [
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
        "assistant",
        "user",
    ]
    assert messages[0]["content"][1] == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    assert messages[1]["content"][0] == {
        "type": "thinking",
        "thinking": "plan",
        "signature": "c2ln",
    }
    assert [b["type"] for b in messages[1]["content"]] == [
        "thinking",
        "text",
        "tool_use",
        "tool_use",
    ]
    assert messages[2]["content"][1]["is_error"] is True
    assert messages[6]["content"] == [{"type": "text", "text": "thanks"}]


def test_gemini_contents() -> None:
    params = make_model("gemini", URL).build_params(ChatRequest(conversation(), tools=[TOOL]))
    contents = params["contents"]
    assert [c.role for c in contents] == ["user", "model", "user", "model", "user", "model", "user"]
    assert contents[0].parts[1].inline_data.mime_type == "image/png"
    first_step = contents[1].parts
    assert (
        first_step[0].text == "Let me look." and first_step[0].thought_signature == b"sig"
    )  # thinking's signature moves on
    assert [p.function_call.id for p in first_step[1:]] == ["c1", "c2"]
    assert contents[2].parts[1].function_response.response == {"error": "Error: r2"}
    assert params["config"].system_instruction == "Be brief."


def test_dashscope_and_ollama_messages() -> None:
    ds = make_model("dashscope", URL).build_params(ChatRequest(conversation(), tools=[TOOL]))[
        "messages"
    ]
    assert ds[1]["content"][1] == {"type": "image", "url": "data:image/png;base64,iVBORw0KGgo="}
    assert ds[3] == {"role": "tool", "tool_call_id": "c1", "content": "r1", "name": "lookup"}
    ol = make_model("ollama", URL).build_params(ChatRequest(conversation(), tools=[TOOL]))[
        "messages"
    ]
    assert ol[1] == {"role": "user", "content": "Look at this", "images": ["iVBORw0KGgo="]}
    assert ol[2]["tool_calls"][0] == {"function": {"name": "lookup", "arguments": {"q": "1"}}}
    assert ol[3] == {"role": "tool", "content": "r1", "tool_name": "lookup"}


def test_url_images_and_tool_result_images() -> None:
    shot = DataBlock(source=URLSource(url="https://example.com/a.png", media_type="image/png"))
    reply = AssistantMsg(
        "assistant",
        [call(1), ToolResultBlock(id="c1", name="lookup", output=[TextBlock(text="see"), PNG])],
    )
    msgs = [UserMsg("user", [TextBlock(text="q"), shot]), reply]
    openai = make_model("openai", URL).build_params(ChatRequest(msgs))["messages"]
    assert openai[0]["content"][1]["image_url"]["url"] == "https://example.com/a.png"
    assert (
        openai[2]["content"] == "see" and openai[3]["role"] == "user"
    )  # tool images follow as user content
    assert openai[3]["content"][1]["type"] == "image_url"
    anthropic = make_model("anthropic", URL).build_params(ChatRequest(msgs))["messages"]
    assert anthropic[0]["content"][1]["source"] == {
        "type": "url",
        "url": "https://example.com/a.png",
    }
    assert anthropic[2]["content"][0]["content"][1]["type"] == "image"
    ollama = make_model("ollama", URL).build_params(ChatRequest(msgs))["messages"]
    assert "[image: https://example.com/a.png]" in ollama[0]["content"]


@pytest.mark.parametrize("provider", ["anthropic", "dashscope"])
def test_forced_tool_while_thinking_falls_back_to_auto_with_a_reminder(provider: str) -> None:
    model = make_model(provider, URL, thinking=True)
    params = model.build_params(
        ChatRequest([UserMsg("user", "go")], tools=[TOOL], tool_choice=NamedToolChoice("lookup"))
    )
    choice = params["tool_choice"]
    assert choice in ({"type": "auto"}, "auto")
    last = params["messages"][-1]
    text = json.dumps(last["content"])
    assert last["role"] == "user" and "`lookup`" in text and "go" in text


def test_forced_tool_without_thinking_is_sent_as_is() -> None:
    request = ChatRequest(
        [UserMsg("user", "go")], tools=[TOOL], tool_choice=NamedToolChoice("lookup")
    )
    assert make_model("anthropic", URL).build_params(request)["tool_choice"] == {
        "type": "tool",
        "name": "lookup",
    }
    assert make_model("openai", URL).build_params(request)["tool_choice"] == {
        "type": "function",
        "function": {"name": "lookup"},
    }
    assert make_model("dashscope", URL).build_params(request)["tool_choice"] == {
        "type": "function",
        "function": {"name": "lookup"},
    }
    required = ChatRequest([UserMsg("user", "go")], tools=[TOOL], tool_choice="required")
    assert make_model("anthropic", URL).build_params(required)["tool_choice"] == {"type": "any"}
    assert make_model("openai", URL).build_params(required)["tool_choice"] == "required"
    ollama = make_model("ollama", URL).build_params(
        required
    )  # Ollama cannot force: a reminder instead
    assert "calling one of the available tools" in ollama["messages"][-1]["content"]
    none = make_model("ollama", URL).build_params(
        ChatRequest([UserMsg("user", "go")], tools=[TOOL], tool_choice="none")
    )
    assert "tools" not in none


def test_structured_schema_uses_json_modes_when_no_tools() -> None:
    schema = {
        "type": "object",
        "properties": {"answer": {"type": "string"}},
        "required": ["answer"],
    }
    request = ChatRequest([UserMsg("user", "q")], structured_json_schema=schema)
    assert (
        make_model("openai", URL).build_params(request)["response_format"]["json_schema"]["schema"]
        == schema
    )
    config = make_model("gemini", URL).build_params(request)["config"]
    assert config.response_mime_type == "application/json" and config.response_json_schema == schema
    assert make_model("ollama", URL).build_params(request)["format"] == schema
    with_tools = ChatRequest([UserMsg("user", "q")], tools=[TOOL], structured_json_schema=schema)
    assert "response_format" not in make_model("openai", URL).build_params(with_tools)


def test_the_old_structured_schema_name_reads_the_same_dict_with_a_warning() -> None:
    schema = {"type": "object", "properties": {}}
    request = ChatRequest([UserMsg("user", "q")], structured_json_schema=schema)
    with pytest.warns(DeprecationWarning, match="structured_json_schema"):
        assert request.structured_schema is schema
    with pytest.raises(AttributeError):
        request.structured_schema = {}  # type: ignore[misc]  # read-only on purpose


async def test_a_structured_reply_sends_the_classes_json_schema() -> None:
    class Answer(BaseModel):
        city: str

    model = ScriptedChatModel(
        [
            AssistantMsg(
                "m",
                [ToolCallBlock(id="c1", name="generate_response", input='{"city": "Oslo"}')],
            )
        ]
    )
    msg = await Agent("a", "p", model).reply(UserMsg("user", "where?"), structured_schema=Answer)
    assert msg.structured_output == Answer(city="Oslo")
    assert model.calls[0].structured_json_schema == Answer.model_json_schema()
    model.assert_complete()


def test_from_string_builds_each_provider() -> None:
    for spec, cls in [
        ("dashscope:qwen-max", "DashScopeChatModel"),
        ("openai:gpt-4o-mini", "OpenAIChatModel"),
        ("anthropic:claude-sonnet-4-6", "AnthropicChatModel"),
        ("ollama:llama3.1", "OllamaChatModel"),
        ("gemini:gemini-2.5-flash", "GeminiChatModel"),
        ("deepseek:deepseek-chat", "OpenAIChatModel"),
    ]:
        model = from_string(spec)
        assert type(model).__name__ == cls and model.model_name == spec.split(":", 1)[1]
    assert from_string("dashscope:qwen-max").context_length == 32_768
    assert from_string("openai:gpt-4o", context_length=1000).context_length == 1000  # override wins
    assert from_string("openai:gpt-4o", stream=False).stream_enabled is False


@pytest.mark.parametrize("spec", ["qwen-max", "nope:model", "openai:", ""])
def test_from_string_rejects_bad_specs(spec: str) -> None:
    with pytest.raises(UnknownProviderError, match="dashscope"):
        from_string(spec)
