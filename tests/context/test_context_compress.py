"""Compression: what is kept, what is summarised, and the event it emits."""

from __future__ import annotations

import json
from typing import Any

import pytest
from context_helpers import is_summary_request, summariser, transcript_of

from tether.agent import Agent
from tether.context import (
    CompressionRequest,
    ContextConfig,
    LocalFileOffloader,
    compress_context,
    estimate_msg_tokens,
)
from tether.errors import ContextTooLargeError
from tether.event import ContextCompressedEvent, EventType
from tether.message import (
    AssistantMsg,
    ChatUsage,
    Msg,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.middleware import MiddlewareBase
from tether.model import ChatRequest, ScriptedChatModel
from tether.state import AgentState, ReplyCursor

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa "


def turn(i: int, words: int = 40) -> list[Msg]:
    """A user message and a finished reply with one tool call and its result."""
    call = ToolCallBlock(id=f"c{i}", name="look", input=json.dumps({"n": i}))
    call.state = ToolCallState.FINISHED
    return [
        UserMsg(name="u", content=f"question {i}: " + WORDS * (words // 10)),
        AssistantMsg(
            name="a",
            content=[call, ToolResultBlock(id=f"c{i}", name="look", output=WORDS * 3)],
            id=f"r{i}",
        ),
    ]


def state_with(turns: int, *, reply: bool = True) -> AgentState:
    state = AgentState()
    for i in range(turns):
        for msg in turn(i):
            state.add_message(msg)
    if reply:
        state.add_message(UserMsg(name="u", content="the current question"))
        state.add_message(AssistantMsg(name="a", content=[], id="current"))
        state.reply = ReplyCursor(reply_id="current")
    return state


def request(state: AgentState, model: ScriptedChatModel, **kw: object) -> CompressionRequest:
    defaults: dict = dict(
        config=ContextConfig(), offloader=None, system_prompt="You help.", reply_id="current"
    )
    defaults.update(kw)
    return CompressionRequest(state=state, model=model, **defaults)


def summary_model(n: int = 1, length: int = 4_000, text: str = "## Goal\nthe summary") -> Any:
    return ScriptedChatModel(
        [summariser(lambda r: AssistantMsg(name="a", content="x"), summary=lambda r: text)] * n,
        context_length=length,
    )


async def test_under_the_threshold_nothing_happens() -> None:
    state = state_with(3)
    model = summary_model(0, length=100_000)
    before = list(state.context)
    assert await compress_context(request(state, model)) is None
    assert state.context == before and state.summary is None
    assert model.calls == []


async def test_over_the_threshold_keeps_recent_whole_messages_and_summarises_the_rest() -> None:
    state = state_with(34)
    model = summary_model()
    total = state.estimated_tokens
    assert total > 0.8 * 4_000
    reply = state.context[-1]
    event = await compress_context(request(state, model))
    assert isinstance(event, ContextCompressedEvent)
    assert event.reply_id == "current" and event.summarised
    assert event.before_tokens >= total and event.after_tokens < event.before_tokens
    assert event.after_tokens == state.estimated_tokens
    assert state.context[-1] is reply  # the reply in progress is untouched
    assert sum(estimate_msg_tokens(m) for m in state.context) <= 0.2 * 4_000
    assert event.compressed_messages + len(state.context) == 70
    assert state.summary is not None and state.summary.startswith("## Goal\nthe summary")
    # whole messages only: every kept call still has its result beside it
    for msg in state.context:
        assert {c.id for c in msg.tool_calls} == {r.id for r in msg.tool_results}
    (call,) = model.calls
    assert is_summary_request(call)
    assert "question 0:" in transcript_of(call) and "[call look]" in transcript_of(call)
    model.assert_complete()


async def test_previous_summary_is_merged_and_usage_is_counted() -> None:
    state = state_with(40)
    state.summary = "## Goal\nthe old summary"
    model = summary_model()
    await compress_context(request(state, model))
    prompt = model.calls[0].messages[-1].get_text_content() or ""
    assert "<previous_summary>\n## Goal\nthe old summary\n</previous_summary>" in prompt
    assert state.usage.input_tokens > 0  # the summarising call's usage is in the totals


async def test_forced_compression_compresses_under_the_threshold() -> None:
    state = state_with(6)
    model = summary_model(length=100_000)
    assert await compress_context(request(state, model)) is None
    config = ContextConfig(trigger_ratio=0.6, reserve_ratio=0.0001)  # 10 tokens: only the reply
    event = await compress_context(request(state, model, force=True, config=config))
    assert event is not None and event.compressed_messages == 13
    # the reply's input is summarised too, but the request still needs a user turn:
    # it is short, so it is kept as it was
    question = state.context[0]
    assert [m.id for m in state.context] == [question.id, "current"]
    assert question.get_text_content() == "the current question"


async def test_forced_with_nothing_older_than_the_reserve_returns_none() -> None:
    state = state_with(0)
    model = summary_model(0)
    assert await compress_context(request(state, model, force=True)) is None
    assert model.calls == []


async def test_without_a_reply_in_progress_the_last_message_may_go() -> None:
    state = state_with(40, reply=False)
    model = summary_model()
    event = await compress_context(request(state, model, reply_id=None))
    assert event is not None and event.reply_id == ""
    assert state.context[-1].id == "r39"


async def test_a_recent_message_larger_than_the_reserve_is_summarised_whole() -> None:
    state = state_with(2)
    state.add_message(UserMsg(name="u", content=WORDS * 400, id="huge"))
    state.add_message(AssistantMsg(name="a", content=[], id="current"))
    state.reply = ReplyCursor(reply_id="current")
    model = summary_model()
    event = await compress_context(request(state, model))
    assert event is not None
    # a cut copy of it opens the kept part, so the request still has a user turn
    copy, reply = state.context
    assert reply.id == "current" and copy.role == "user" and copy.metadata["cut_from"] == "huge"
    assert estimate_msg_tokens(copy) <= 0.2 * 4_000


async def test_a_result_separated_from_its_call_moves_the_boundary() -> None:
    """A hand-built context with a call and its result in different messages."""
    state = AgentState()
    for i in range(20):
        for msg in turn(i):
            state.add_message(msg)
    call = ToolCallBlock(id="split", name="look", input="{}")
    state.add_message(AssistantMsg(name="a", content=[call], id="calls"))
    state.add_message(UserMsg(name="u", content=[ToolResultBlock(id="split", name="look")]))
    state.add_message(UserMsg(name="u", content="short"))
    model = summary_model()
    last_two = sum(estimate_msg_tokens(m) for m in state.context[-2:])
    config = ContextConfig(reserve_ratio=(last_two + 1) / 4_000)  # fits them, not "calls"
    event = await compress_context(request(state, model, config=config, reply_id=None, force=True))
    assert event is not None
    ids = {b.id for m in state.context for b in m.content if isinstance(b, ToolResultBlock)}
    assert "split" not in ids  # the orphaned result went with its call
    assert state.context[-1].get_text_content() == "short"


async def test_system_prompt_over_the_threshold_raises_with_the_numbers() -> None:
    state = state_with(3)
    before = state.model_dump()
    model = summary_model(0, length=1_000)
    with pytest.raises(ContextTooLargeError, match=r"threshold of 800 .*context_length 1000"):
        await compress_context(request(state, model, system_prompt=WORDS * 200))
    assert isinstance(ContextTooLargeError("x"), RuntimeError)
    assert state.model_dump() == before


async def test_exact_counter_of_the_model_is_used_for_the_prompt() -> None:
    class Counting(ScriptedChatModel):
        def count_tokens(self, text: str) -> int | None:
            return 10_000

    state = state_with(1)
    model = Counting([], context_length=12_000)
    with pytest.raises(ContextTooLargeError, match="about 10000 tokens"):
        await compress_context(request(state, model))


async def test_reported_usage_anchors_the_count() -> None:
    state = state_with(2)
    assert state.estimated_tokens < 8_000  # the estimate alone would not compress
    state.record_usage(ChatUsage(input_tokens=8_500, output_tokens=100))
    assert state.estimated_tokens == 8_600
    state.add_message(UserMsg(name="u", content="one more"))
    assert 8_600 < state.estimated_tokens < 8_620  # anchor + the estimate of what came after
    model = summary_model(1, length=10_000)
    config = ContextConfig(reserve_ratio=0.001)
    event = await compress_context(request(state, model, config=config))
    assert event is not None and event.before_tokens == 8_600 + estimate_msg_tokens(
        UserMsg(name="u", content="one more")
    )
    # re-anchored on the estimate of what the next request carries
    assert state.token_anchor > 0 and event.after_tokens == state.estimated_tokens < 8_000


async def test_tool_schemas_count_before_any_usage_is_reported() -> None:
    state = state_with(1)
    model = summary_model(1, length=2_000)
    schema = {"name": "big", "description": WORDS * 150, "parameters": {}}
    config = ContextConfig(reserve_ratio=0.01)
    assert await compress_context(request(state, model, config=config)) is None
    event = await compress_context(request(state, model, config=config, tools=[schema]))
    assert event is not None and event.before_tokens > 1_600


async def test_offloader_gets_every_compressed_message_before_summarising(tmp_path) -> None:
    state = state_with(40)
    offloader = LocalFileOffloader(tmp_path)
    seen: list[int] = []

    def summary(r: ChatRequest) -> str:
        seen.append(len(offloader.messages_path(state.session_id).read_text().splitlines()))
        return "## Goal\nsummary"

    model = ScriptedChatModel(
        [summariser(lambda r: AssistantMsg(name="a", content="x"), summary=summary)],
        context_length=4_000,
    )
    ids = [m.id for m in state.context]
    event = await compress_context(request(state, model, offloader=offloader))
    assert event is not None and event.offload_path is not None
    lines = open(event.offload_path).read().splitlines()
    assert seen == [event.compressed_messages] == [len(lines)]
    stored = [Msg.model_validate_json(line) for line in lines]
    assert [m.id for m in stored] + [m.id for m in state.context] == ids
    assert f"[Full text of the summarised messages: {event.offload_path}" in (state.summary or "")


async def test_on_compress_context_middleware_wraps_and_can_replace() -> None:
    seen: list[object] = []

    class Watch(MiddlewareBase):
        async def on_compress_context(self, call, call_next):  # type: ignore[override]
            seen.append(call.config)
            result = await call_next(call)
            seen.append(result)
            return result

    class Skip(MiddlewareBase):
        async def on_compress_context(self, call, call_next):  # type: ignore[override]
            return None

    config = ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1)
    state = state_with(40)
    model = summary_model()
    agent = Agent("a", "You help.", model, state=state, middlewares=[Watch()])
    event = await agent.compress_context(config)
    assert seen[0] is config and seen[1] is event and isinstance(event, ContextCompressedEvent)
    state2 = state_with(40)
    agent2 = Agent("a", "You help.", summary_model(0), state=state2, middlewares=[Skip()])
    assert await agent2.compress_context() is None and state2.summary is None


async def test_compression_during_a_reply_emits_its_event_first() -> None:
    step = summariser(lambda r: AssistantMsg(name="a", content="fine"))
    model = ScriptedChatModel([step] * 2, context_length=4_000)
    agent = Agent("a", "You help.", model, state=state_with(34, reply=False))
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="go on"))]
    types = [e.type for e in events]
    assert types[:2] == [EventType.REPLY_START, EventType.CONTEXT_COMPRESSED]
    assert types.index(EventType.CONTEXT_COMPRESSED) < types.index(EventType.MODEL_CALL_START)
    assert is_summary_request(model.calls[0]) and not is_summary_request(model.calls[1])
    model.assert_complete()


async def test_the_request_after_a_compression_carries_the_new_summary() -> None:
    step = summariser(
        lambda r: AssistantMsg(name="a", content="fine"), summary=lambda r: "## Goal\nNEW SUMMARY"
    )
    model = ScriptedChatModel([step] * 2, context_length=4_000)
    agent = Agent("a", "You help.", model, state=state_with(34, reply=False))
    await agent.reply(UserMsg(name="u", content="go on"))
    system = model.calls[1].messages[0].get_text_content() or ""
    assert "NEW SUMMARY" in system
