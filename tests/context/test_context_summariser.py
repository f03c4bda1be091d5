"""The summariser misbehaving: tool calls instead of text, cancellation mid-way."""

from __future__ import annotations

import asyncio

import pytest

from tether.agent import Agent
from tether.event import ContextCompressedEvent
from tether.message import AssistantMsg, Msg, TextBlock, UserMsg
from tether.model import ScriptedChatModel

WORDS = "the quick brown fox jumps over the lazy dog "


def history(n: int = 60) -> list[Msg]:
    return [UserMsg(name="u", content=f"m{i} " + WORDS * 6) for i in range(n)]


async def test_a_summariser_answering_with_tool_calls_only_falls_back_with_a_notice() -> None:
    calls_only = AssistantMsg(
        name="s", content=[ScriptedChatModel.tool_call("search", {"q": "x"}, id="t1")]
    )
    agent = Agent("a", "You help.", ScriptedChatModel([calls_only], context_length=4_000))
    agent.state.summary = "## Goal\nkeep me"
    await agent.observe(history())
    event = await agent.compress_context()
    assert isinstance(event, ContextCompressedEvent) and not event.summarised
    summary = agent.state.summary or ""
    assert summary.startswith("## Goal\nkeep me")  # the previous summary is not lost
    assert "ModelResponseError: the summarising call returned no text" in summary
    assert f"Notice: {event.compressed_messages} older messages" in summary
    # no tool call leaked into the context
    assert not any(m.tool_calls for m in agent.state.context)


async def test_text_next_to_stray_tool_calls_is_used_as_the_summary() -> None:
    mixed = AssistantMsg(
        name="s",
        content=[
            TextBlock(text="## Goal\nsummarised"),
            ScriptedChatModel.tool_call("search", {"q": "x"}, id="t1"),
        ],
    )
    model = ScriptedChatModel([mixed], context_length=4_000)
    agent = Agent("a", "You help.", model)
    await agent.observe(history(45))  # one summarising call
    event = await agent.compress_context()
    assert isinstance(event, ContextCompressedEvent) and event.summarised
    assert agent.state.summary == "## Goal\nsummarised"
    model.assert_complete()


async def test_cancelled_while_summarising_leaves_the_state_as_it_was() -> None:
    model = ScriptedChatModel([asyncio.CancelledError()], context_length=4_000)
    agent = Agent("a", "You help.", model)
    await agent.observe(history())
    before = agent.state.model_dump_json()
    with pytest.raises(asyncio.CancelledError):
        await agent.compress_context()
    assert agent.state.model_dump_json() == before
