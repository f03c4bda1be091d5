"""Bad paths: the summariser fails or is overwhelmed, the prompt is too large, the disk fails."""

from __future__ import annotations

import pytest
from context_helpers import (
    is_summary_request,
    qwen_tokens,
    request_tokens,
    summariser,
    transcript_of,
    with_usage,
)

from tether.agent import Agent
from tether.context import ContextConfig, LocalFileOffloader, estimate_msg_tokens
from tether.errors import ContextTooLargeError
from tether.event import ContextCompressedEvent, EventType
from tether.message import AssistantMsg, Msg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel

WORDS = "the quick brown fox jumps over the lazy dog while seven wizards quietly judge "


def history(n: int, words: int = 60) -> list[Msg]:
    return [
        (UserMsg if i % 2 == 0 else AssistantMsg)(
            name="x", content=f"message {i}: " + WORDS * (words // 14)
        )
        for i in range(n)
    ]


def answer(text: str = "done") -> object:
    return lambda r: with_usage(r, AssistantMsg(name="a", content=text))


async def test_summariser_failure_drops_with_a_notice_and_the_reply_continues(tmp_path) -> None:
    model = ScriptedChatModel(
        [ConnectionError("summariser is down"), answer("still here")], context_length=4_000
    )
    offloader = LocalFileOffloader(tmp_path)
    agent = Agent("a", "You help.", model, offloader=offloader)
    await agent.observe(history(60))
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="and now?"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    assert compressed.summarised is False and compressed.compressed_messages > 0
    assert events[-1].type is EventType.REPLY_END
    assert events[-1].msg.get_text_content() == "still here"
    summary = agent.state.summary or ""
    assert f"Notice: {compressed.compressed_messages} older messages" in summary
    assert "summarising them failed (ConnectionError: summariser is down)" in summary
    assert f"Their full text is in {compressed.offload_path}" in summary
    # nothing is lost: the dropped messages are on disk
    lines = open(compressed.offload_path or "").read().splitlines()
    assert len(lines) == compressed.compressed_messages
    assert Msg.model_validate_json(lines[0]).get_text_content().startswith("message 0:")
    model.assert_complete()


async def test_summariser_failure_without_offloader_says_the_messages_are_gone() -> None:
    model = ScriptedChatModel(
        [lambda r: AssistantMsg(name="s", content="  "), answer()], context_length=4_000
    )
    agent = Agent("a", "You help.", model)
    await agent.observe(history(60))
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="hi"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    summary = agent.state.summary or ""
    assert "returned no text" in summary and "cannot be recovered" in summary
    assert compressed.compressed_messages + len(agent.state.context) == 62
    assert compressed.compressed_messages > 40 and compressed.offload_path is None
    model.assert_complete()


async def test_a_failure_keeps_the_previous_summary() -> None:
    model = ScriptedChatModel([RuntimeError("boom"), answer()], context_length=4_000)
    agent = Agent("a", "You help.", model)
    agent.state.summary = "## Goal\nship the release"
    await agent.observe(history(60))
    await agent.reply(UserMsg(name="u", content="hi"))
    summary = agent.state.summary or ""
    assert summary.startswith("## Goal\nship the release") and "RuntimeError: boom" in summary


async def test_summarising_input_too_large_is_chunked_and_merged() -> None:
    outputs: list[str] = []
    seen_previous: list[str] = []

    def summary(request: ChatRequest) -> str:
        prompt = request.messages[-1].get_text_content() or ""
        seen_previous.append(
            prompt.split("<previous_summary>\n", 1)[1].split("\n</previous_summary>")[0]
        )
        assert request_tokens(request) <= 16_000  # every summarising call fits the model
        outputs.append(
            f"## Goal\nchunk {len(outputs)} covered through {transcript_of(request)[-30:]!r}"
        )
        return outputs[-1]

    step = summariser(lambda r: AssistantMsg(name="a", content="ok"), summary=summary)
    model = ScriptedChatModel([step] * 12, context_length=16_000)
    agent = Agent("a", "You help.", model)
    observed = history(400, words=120)  # ~60k tokens: several times the window
    assert sum(estimate_msg_tokens(m) for m in observed) > 3 * 16_000
    await agent.observe(observed)
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="summarise me"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    calls = [c for c in model.calls if is_summary_request(c)]
    assert len(calls) >= 4 and compressed.summarised
    assert compressed.compressed_messages + len(agent.state.context) == 402
    assert compressed.compressed_messages > 350
    # each call folds the previous call's summary into the next
    assert seen_previous == ["(none yet)", *outputs[:-1]]
    assert (agent.state.summary or "").startswith(outputs[-1])
    # the whole transcript went through, in order
    transcripts = "".join(transcript_of(c) for c in calls)
    last = f"message {compressed.compressed_messages - 1}:"
    assert transcripts.index("message 0:") < transcripts.index(last)
    assert request_tokens(model.calls[-1]) < 16_000


async def test_a_chunk_failing_midway_keeps_what_was_summarised() -> None:
    calls = 0

    def step(request: ChatRequest) -> Msg:
        nonlocal calls
        if is_summary_request(request):
            calls += 1
            if calls == 2:
                raise TimeoutError("slow summariser")
            return AssistantMsg(name="s", content="## Goal\nfirst chunk")
        return AssistantMsg(name="a", content="ok")

    model = ScriptedChatModel([step] * 3, context_length=16_000)
    agent = Agent("a", "You help.", model)
    await agent.observe(history(400, words=120))
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="go"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    assert not compressed.summarised
    summary = agent.state.summary or ""
    assert summary.startswith("## Goal\nfirst chunk")
    dropped = int(summary.split("[Notice: ")[1].split(" ")[0])
    assert 0 < dropped < 400 and "TimeoutError: slow summariser" in summary
    model.assert_complete()


async def test_one_message_larger_than_a_chunk_is_cut_for_the_summariser() -> None:
    sizes: list[int] = []

    def summary(request: ChatRequest) -> str:
        sizes.append(request_tokens(request))
        return "## Goal\nbig paste"

    step = summariser(lambda r: AssistantMsg(name="a", content="ok"), summary=summary)
    model = ScriptedChatModel([step] * 2, context_length=8_000)
    agent = Agent("a", "You help.", model)
    await agent.observe([UserMsg(name="u", content=WORDS * 2_500)])  # ~40k tokens in one message
    await agent.reply(UserMsg(name="u", content="what did I paste?"))
    assert len(sizes) == 1 and sizes[0] <= 8_000
    assert "message cut for the summary" in transcript_of(model.calls[0])
    model.assert_complete()


async def test_system_prompt_too_large_raises_from_reply_and_compress_context() -> None:
    model = ScriptedChatModel([], context_length=2_000)
    agent = Agent("a", "Be careful. " * 1_000, model)
    assert qwen_tokens(agent.system_prompt) > 1_600
    with pytest.raises(RuntimeError, match="system prompt alone is about .* over the compression"):
        await agent.reply(UserMsg(name="u", content="hi"))
    with pytest.raises(ContextTooLargeError, match="threshold of 1200"):
        await agent.compress_context(ContextConfig(trigger_ratio=0.6, reserve_ratio=0.2))
    assert model.calls == []


async def test_offloader_failure_leaves_the_state_unchanged(tmp_path) -> None:
    blocker = tmp_path / "root"
    offloader = LocalFileOffloader(blocker)
    model = ScriptedChatModel([], context_length=4_000)
    agent = Agent("a", "You help.", model, offloader=offloader)
    await agent.observe(history(60))
    blocker.mkdir()
    (blocker / agent.state.session_id).write_text("a file where the session folder should be")
    before = agent.state.model_dump()
    with pytest.raises(OSError):
        await agent.compress_context()
    assert agent.state.model_dump() == before
    assert model.calls == []
