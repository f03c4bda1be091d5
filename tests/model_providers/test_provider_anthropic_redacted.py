"""Anthropic `redacted_thinking`: kept as a redacted thinking block and sent back unchanged."""

import json

from provider_replay import ReplayServer
from provider_wire import make_model, stream_reply

from tether.agent import Agent
from tether.event import EventType, fold_event
from tether.message import AssistantMsg, ThinkingBlock, ToolCallBlock, UserMsg
from tether.model import ChatRequest, StreamAssembler
from tether.model.providers._gemini_format import format_gemini
from tether.model.providers._turns import split_turns
from tether.state import AgentState
from tether.tool import Toolkit

SECRET = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP"


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny in {city}"


FIRST = [
    ("thinking", "I should look it up."),
    ("signature", "sig-1"),
    ("redacted", SECRET),
    ("call", 0, "toolu_1", "get_weather"),
    ("args", 0, '{"city": "Paris"}'),
]


async def test_a_redacted_block_streams_into_its_own_thinking_block(server: ReplayServer) -> None:
    server.add(stream_reply("anthropic", FIRST))
    assembler = StreamAssembler("r1")
    events = []
    async for delta in make_model("anthropic", server.url).stream(
        ChatRequest([UserMsg("user", "Weather in Paris?")])
    ):
        events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    plain, redacted, call = assembler.blocks
    assert isinstance(plain, ThinkingBlock) and not plain.redacted
    assert (plain.thinking, plain.signature) == ("I should look it up.", "sig-1")
    assert isinstance(redacted, ThinkingBlock) and redacted.redacted
    assert (redacted.thinking, redacted.signature) == ("", SECRET)
    assert isinstance(call, ToolCallBlock)
    ends = [e for e in events if e.type == EventType.THINKING_BLOCK_END]
    assert [(e.redacted, e.signature) for e in ends] == [(False, "sig-1"), (True, SECRET)]
    folded = AssistantMsg("a", [])
    for event in events:
        fold_event(folded, event)
    assert folded.content == assembler.blocks


async def test_the_redacted_block_goes_back_unchanged_and_survives_the_state(
    server: ReplayServer,
) -> None:
    server.add(stream_reply("anthropic", FIRST), stream_reply("anthropic", [("text", "Sunny.")]))
    agent = Agent(
        name="a",
        system_prompt="Be brief.",
        model=make_model("anthropic", server.url),
        toolkit=Toolkit(tools=[get_weather]),
    )
    await agent.reply(UserMsg("user", "Weather in Paris?"))
    server.assert_done()
    sent = server.requests[1].json()["messages"][1]["content"]
    assert sent[:2] == [
        {"type": "thinking", "thinking": "I should look it up.", "signature": "sig-1"},
        {"type": "redacted_thinking", "data": SECRET},
    ]
    assert sent[2]["type"] == "tool_use"
    loaded = AgentState.model_validate_json(agent.state.model_dump_json())
    (block,) = [
        b for m in loaded.context for b in m.content if isinstance(b, ThinkingBlock) and b.redacted
    ]
    assert block.signature == SECRET


def test_other_providers_never_receive_anthropic_redacted_reasoning() -> None:
    msgs = [
        UserMsg("user", "hi"),
        AssistantMsg("a", [ThinkingBlock(thinking="", signature=SECRET, redacted=True)]),
        UserMsg("user", "again"),
    ]
    _, contents = format_gemini(split_turns(msgs))
    assert SECRET not in json.dumps([c.model_dump(mode="json") for c in contents])
