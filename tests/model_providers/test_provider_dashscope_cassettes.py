"""DashScope cassettes: native protocol through `dashscope.AsyncClient`, compatible mode through `openai`."""

import json

import pytest
from provider_replay import ReplayServer

from tether.credential import DashScopeCredential, OpenAICredential
from tether.event import EventType
from tether.message import SystemMsg, TextBlock, ToolCallBlock, UserMsg
from tether.model import ChatRequest, DashScopeChatModel, OpenAIChatModel, StreamAssembler

SHELL_TOOL = {
    "name": "execute_shell_command",
    "description": "Execute given command and return the return code, standard output and\nerror within <returncode></returncode>, <stdout></stdout> and\n<stderr></stderr> tags.",
    "parameters": {
        "properties": {
            "command": {"description": "The shell command to execute.", "type": "string"},
            "timeout": {
                "default": 300,
                "description": "The maximum time (in seconds) allowed for the command to run.",
                "type": "integer",
            },
        },
        "required": ["command"],
        "type": "object",
    },
}


def native(server: ReplayServer, name: str) -> DashScopeChatModel:
    return DashScopeChatModel(
        DashScopeCredential(api_key="sk-ds", base_url=server.url + "/api/v1"), name
    )


async def run(m, request):
    assembler = StreamAssembler(reply_id="r1")
    events = []
    async for delta in m.stream(request):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    return assembler, events


@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_native_stream_text_incremental(server: ReplayServer, mode: str) -> None:
    server.add_cassette("dashscope/native_stream_text_incremental.yaml", mode)
    assembler, events = await run(
        native(server, "qwen-turbo"), ChatRequest([UserMsg("user", "Count from 1 to 5")])
    )
    server.assert_done()
    (block,) = assembler.blocks
    assert isinstance(block, TextBlock) and block.text == "1, 2, 3, 4, 5."
    # Seven text frames with finish_reason "null", then an empty "stop" frame that adds nothing.
    assert [e.type for e in events].count(EventType.TEXT_BLOCK_DELTA) == 7
    assert assembler.usage is not None
    assert (assembler.usage.input_tokens, assembler.usage.output_tokens) == (
        19,
        14,
    )  # cumulative: last frame
    sent = server.requests[0]
    assert sent.path == "/api/v1/services/aigc/text-generation/generation"
    assert sent.headers["x-dashscope-sse"] == "enable"
    assert sent.headers["authorization"] == "Bearer sk-ds"
    body = sent.json()
    assert body["model"] == "qwen-turbo"
    assert body["parameters"]["incremental_output"] is True
    assert body["input"]["messages"] == [{"role": "user", "content": "Count from 1 to 5"}]


async def test_native_stream_tool_call(server: ReplayServer) -> None:
    interactions = server.add_cassette("dashscope/native_stream_tool_call.yaml")
    request = ChatRequest(
        [
            SystemMsg("system", "You are an assistant with tool access."),
            UserMsg("user", "compute 10+20 for me using shell"),
        ],
        tools=[SHELL_TOOL],
    )
    assembler, events = await run(native(server, "qwen-max"), request)
    server.assert_done()
    (call,) = assembler.blocks
    assert isinstance(call, ToolCallBlock)
    assert call.id == "call_d69a5e709960444d939d30"  # later frames' empty ids did not overwrite it
    assert call.name == "execute_shell_command"
    assert json.loads(call.input) == {"command": "echo $((10+20))", "timeout": 300}
    assert [e.type for e in events].count(EventType.TOOL_CALL_DELTA) == 5
    assert assembler.usage is not None and assembler.usage.output_tokens == 34
    sent = server.requests[0].json()
    recorded = interactions[0].request_body
    assert sent["input"] == recorded["input"]
    assert sent["parameters"]["tools"] == recorded["parameters"]["tools"]
    assert sent["parameters"]["result_format"] == "message"


@pytest.mark.parametrize("mode", ["event", "bytes"])
async def test_compat_stream_tool_call(server: ReplayServer, mode: str) -> None:
    interactions = server.add_cassette("dashscope/compat_stream_tool_call.yaml", mode)
    tool = {
        "name": "search",
        "description": "Search info",
        "parameters": interactions[0].request_body["tools"][0]["function"]["parameters"],
    }
    m = OpenAIChatModel(
        OpenAICredential(api_key="sk-ds", base_url=server.url + "/compatible-mode/v1"), "qwen-plus"
    )
    assembler, events = await run(m, ChatRequest([UserMsg("user", "Search AI news")], tools=[tool]))
    server.assert_done()
    (call,) = assembler.blocks  # `content: ""` beside the tool deltas opens no text block
    assert isinstance(call, ToolCallBlock)
    assert (
        call.id == "call_0e4e055c658b4076bf302b" and call.name == "search"
    )  # not blanked by `name: ""`
    assert json.loads(call.input) == {"query": "AI news"}
    assert [e.type for e in events] == [
        EventType.TOOL_CALL_START,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_DELTA,
        EventType.TOOL_CALL_END,
    ]
    assert assembler.usage is not None and assembler.usage.input_tokens > 0
    sent = server.requests[0].json()
    assert sent["tools"] == interactions[0].request_body["tools"]
    assert sent["messages"] == interactions[0].request_body["messages"]
