"""The seed's DashScope agent, unchanged, against a local server speaking DashScope's protocol."""

import json

from provider_replay import ReplayServer
from provider_wire import stream_reply

from tether.agent import Agent
from tether.credential import DashScopeCredential
from tether.event import EventType
from tether.message import UserMsg
from tether.model import DashScopeChatModel
from tether.tool import Toolkit


def read_readme() -> str:
    """Return the README."""
    return "# tether\nAgents you can trust with real tools."


def check_requests(server: ReplayServer) -> None:
    """Both requests went out in DashScope's native format, the second with the tool result."""
    first, second = (r.json() for r in server.requests)
    assert server.requests[0].headers["authorization"] == "Bearer YOUR_API_KEY"
    assert server.requests[0].headers["x-dashscope-sse"] == "enable"
    assert first["model"] == "qwen-max"
    assert first["input"]["messages"][0] == {
        "role": "system",
        "content": first["input"]["messages"][0]["content"],
    }
    assert "You are a helpful assistant." in first["input"]["messages"][0]["content"]
    assert [t["function"]["name"] for t in first["parameters"]["tools"]] == ["read_readme"]
    tool_message = second["input"]["messages"][-1]
    assert tool_message["role"] == "tool" and tool_message["tool_call_id"] == "call_r"
    assert "Agents you can trust" in tool_message["content"]
    assert second["input"]["messages"][-2]["tool_calls"][0]["function"] == {
        "name": "read_readme",
        "arguments": "{}",
    }


async def test_seed_minimal_agent_streams_a_tool_call_and_an_answer(
    server: ReplayServer, monkeypatch
) -> None:
    # Only the endpoint is redirected (by environment); the seed code below is verbatim.
    monkeypatch.setenv("DASHSCOPE_BASE_URL", server.url + "/api/v1")
    server.add(
        stream_reply(
            "dashscope",
            [
                ("call", 0, "call_r", "read_readme"),
                ("args", 0, "{"),
                ("args", 0, "}"),
                ("usage", 120, 12),
            ],
        ),
        stream_reply(
            "dashscope",
            [
                ("text", "The README says "),
                ("text", "tether builds agents "),
                ("text", "you can trust."),
                ("usage", 160, 9),
            ],
        ),
    )

    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=DashScopeChatModel(
            credential=DashScopeCredential(api_key="YOUR_API_KEY"),
            model="qwen-max",
        ),
        toolkit=Toolkit(tools=[read_readme]),
    )

    printed: list[str] = []
    msg = UserMsg(name="user", content="Summarize the contents of the README.")
    async for event in agent.reply_stream(msg):
        match event.type:
            case EventType.TEXT_BLOCK_DELTA:
                printed.append(event.delta)
            case EventType.TOOL_CALL_START:
                printed.append(f"[calling {event.name}]")
            case _:
                ...

    server.assert_done()
    assert printed == [
        "[calling read_readme]",
        "The README says ",
        "tether builds agents ",
        "you can trust.",
    ]
    check_requests(server)
    usage = agent.state.model_dump(mode="json")
    assert "YOUR_API_KEY" not in json.dumps(usage)
