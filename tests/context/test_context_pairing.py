"""What a compression keeps is a request every provider accepts: user turn first, pairs whole."""

from __future__ import annotations

import json

import pytest
from context_helpers import is_summary_request

from tether.agent import Agent
from tether.context import (
    CompressionRequest,
    ContextConfig,
    LocalFileOffloader,
    compress_context,
    estimate_msg_tokens,
)
from tether.event import ConfirmResult, ContextCompressedEvent, UserConfirmResultEvent
from tether.message import (
    AssistantMsg,
    Msg,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ChatRequest, ScriptedChatModel
from tether.state import AgentState, ReplyCursor
from tether.tool import Toolkit, tool

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa "
WINDOW = 4_000


def finished_call(call_id: str) -> ToolCallBlock:
    call = ToolCallBlock(id=call_id, name="look", input=json.dumps({"q": call_id}))
    call.state = ToolCallState.FINISHED
    return call


def mixed_history() -> list[Msg]:
    """Turns of both shapes: tether replies (call + result in one message) and hand-built
    ones (the result in a later user-role message), with texts of varied length."""
    msgs: list[Msg] = []
    for i in range(12):
        msgs.append(UserMsg(name="u", content=f"question {i}: " + WORDS * (1 + i % 4)))
        if i % 3 == 0:
            msgs.append(AssistantMsg(name="a", content=[finished_call(f"s{i}")], id=f"calls{i}"))
            msgs.append(
                UserMsg(name="u", content=[ToolResultBlock(id=f"s{i}", name="look", output=WORDS)])
            )
            msgs.append(AssistantMsg(name="a", content="seen " + WORDS, id=f"after{i}"))
        else:
            result = ToolResultBlock(id=f"c{i}", name="look", output=WORDS * (i % 5))
            msgs.append(
                AssistantMsg(name="a", content=[finished_call(f"c{i}"), result], id=f"r{i}")
            )
    return msgs


def check_well_formed(context: list[Msg], reply_id: str | None) -> None:
    """The first message is a user turn; no result without its call, no call without result."""
    assert context and context[0].role == "user", [m.role for m in context]
    assert not context[0].tool_results  # a user turn, not the tail of someone else's call
    calls: set[str] = set()
    results: set[str] = set()
    for msg in context:
        for block in msg.content:
            if isinstance(block, ToolCallBlock):
                calls.add(block.id)
            elif isinstance(block, ToolResultBlock):
                assert block.id in calls, f"result {block.id} kept without its call"
                results.add(block.id)
    open_calls = {c.id for m in context if m.id != reply_id for c in m.tool_calls}
    assert open_calls <= results, f"calls kept without a result: {open_calls - results}"


def summary_model(n: int = 1) -> ScriptedChatModel:
    return ScriptedChatModel(
        [AssistantMsg(name="s", content="## Goal\nsummary")] * n, context_length=WINDOW
    )


@pytest.mark.parametrize("reserve_tokens", range(40, 880, 61))
async def test_every_boundary_keeps_a_user_turn_first_and_pairs_whole(reserve_tokens: int) -> None:
    state = AgentState()
    for msg in [*mixed_history(), UserMsg(name="u", content="now?")]:
        state.add_message(msg)
    state.add_message(AssistantMsg(name="a", content=[], id="current"))
    state.reply = ReplyCursor(reply_id="current")
    config = ContextConfig(reserve_ratio=reserve_tokens / WINDOW)
    request = CompressionRequest(
        state=state,
        model=summary_model(),
        config=config,
        offloader=None,
        system_prompt="You help.",
        reply_id="current",
        force=True,
    )
    event = await compress_context(request)
    assert event is not None
    check_well_formed(state.context, "current")
    assert state.context[-1].id == "current"


@pytest.mark.parametrize("reserve_tokens", range(40, 880, 67))
async def test_without_a_reply_the_kept_part_still_starts_with_a_user_turn(
    reserve_tokens: int,
) -> None:
    state = AgentState()
    for msg in mixed_history():
        state.add_message(msg)
    request = CompressionRequest(
        state=state,
        model=summary_model(),
        config=ContextConfig(reserve_ratio=reserve_tokens / WINDOW),
        offloader=None,
        system_prompt="You help.",
        reply_id=None,
        force=True,
    )
    await compress_context(request)
    if state.context:  # everything may go: the next reply starts with the user's message
        check_well_formed(state.context, None)


async def test_an_input_larger_than_the_reserve_leaves_a_cut_user_turn(tmp_path) -> None:
    """A huge pasted input is summarised, but the model still gets a user turn to answer."""
    question = "Please review this log and tell me what failed. "
    paste = question + "\n".join(f"line {i}: " + WORDS for i in range(600)) + "\nTHE END"
    model = ScriptedChatModel(
        [
            AssistantMsg(name="s", content="## Goal\nreview a pasted log"),
            lambda r: AssistantMsg(name="a", content="looked"),
        ],
        context_length=WINDOW,
    )
    agent = Agent("a", "You help.", model, offloader=LocalFileOffloader(tmp_path))
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content=paste, id="paste"))]
    (compressed,) = [e for e in events if isinstance(e, ContextCompressedEvent)]
    sent = model.calls[1].messages
    assert [m.role for m in sent] == ["system", "user"]  # the empty reply is left out
    copy = sent[1].get_text_content() or ""
    assert copy.startswith(question) and copy.rstrip().endswith("THE END")
    assert "cut to fit the context" in copy and str(compressed.offload_path) in copy
    assert estimate_msg_tokens(sent[1]) <= ContextConfig().reserve(WINDOW)
    # the original is summarised and saved whole; the copy is a new message
    saved = [Msg.model_validate_json(line) for line in open(str(compressed.offload_path))]
    assert saved[-1].id == "paste" and saved[-1].get_text_content() == paste
    assert agent.state.context[0].id != "paste"
    model.assert_complete()


@tool(requires_confirmation=True)
def delete(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


@tool(is_read_only=True)
def look(q: str) -> str:
    """Look something up."""
    return "found: " + WORDS * 150


def state_of(msgs: list[Msg]) -> AgentState:
    state = AgentState()
    for msg in msgs:
        state.add_message(msg)
    return state


async def test_a_paused_reply_survives_compression_and_json_intact() -> None:
    """Pause between reasoning steps (one call done, one ASKING), compress, save, load, resume."""
    model = ScriptedChatModel(
        [
            AssistantMsg(
                name="a",
                content=[
                    ScriptedChatModel.tool_call("look", {"q": "x"}, id="c-look"),
                    ScriptedChatModel.tool_call("delete", {"path": "a.txt"}, id="c-del"),
                ],
            ),
            AssistantMsg(name="s", content="## Goal\ndelete a.txt"),
            lambda r: AssistantMsg(name="a", content="done"),
        ],
        context_length=WINDOW,
    )
    toolkit = Toolkit(tools=[look, delete])
    agent = Agent("a", "You help.", model, toolkit=toolkit, state=state_of(mixed_history()))
    paused = await agent.reply(UserMsg(name="u", content="clean up"))
    reply = agent.state.reply_msg()
    assert reply is not None and paused.metadata["awaiting"] == ["user_confirmation"]
    snapshot = reply.model_dump_json()
    event = await agent.compress_context(ContextConfig(trigger_ratio=0.5, reserve_ratio=0.01))
    assert isinstance(event, ContextCompressedEvent) and event.compressed_messages > 0
    assert agent.state.reply_msg() is reply and reply.model_dump_json() == snapshot
    check_well_formed(agent.state.context, reply.id)
    loaded = AgentState.model_validate_json(agent.state.model_dump_json())
    assert loaded.estimated_tokens == agent.state.estimated_tokens
    other = Agent("a", "You help.", model, toolkit=toolkit, state=loaded)
    (asking,) = paused.metadata["pause_events"][0]["tool_calls"]
    resume = UserConfirmResultEvent(
        reply_id=reply.id,
        confirm_results=[
            ConfirmResult(confirmed=True, tool_call=ToolCallBlock.model_validate(asking))
        ],
    )
    final = await other.reply(resume)
    assert final.get_text_content() == "done"
    last: ChatRequest = model.calls[-1]
    assert not is_summary_request(last)
    check_well_formed(last.messages[1:], final.id)
    results = {r.id: r.get_text() for r in final.tool_results}
    assert results == {"c-look": "found: " + WORDS * 150, "c-del": "deleted a.txt"}
    model.assert_complete()


async def test_compression_between_two_reasoning_steps_keeps_the_reply_whole() -> None:
    """The automatic check before step 2 compresses; step 2 sees step 1's call and result."""

    def summary_or_answer(request: ChatRequest) -> Msg:
        if is_summary_request(request):
            return AssistantMsg(name="s", content="## Goal\nlook things up")
        reply = request.messages[-1]
        assert [c.id for c in reply.tool_calls] == [r.id for r in reply.tool_results] == ["c1"]
        check_well_formed(request.messages[1:], reply.id)
        return AssistantMsg(name="a", content="answered")

    model = ScriptedChatModel(
        [
            AssistantMsg(
                name="a", content=[ScriptedChatModel.tool_call("look", {"q": "y"}, id="c1")]
            ),
            summary_or_answer,
            summary_or_answer,
        ],
        context_length=WINDOW,
    )
    chat = [
        (UserMsg if i % 2 == 0 else AssistantMsg)(name="x", content=f"m{i} " + WORDS * 12)
        for i in range(12)
    ]
    state = state_of([*mixed_history(), *chat])
    agent = Agent("a", "You help.", model, toolkit=Toolkit(tools=[look]), state=state)
    assert 2_000 < state.estimated_tokens < 2_800  # under the trigger (3,200) until the result
    events = [e async for e in agent.reply_stream(UserMsg(name="u", content="go"))]
    kinds = [type(e).__name__ for e in events]
    assert kinds.index("ContextCompressedEvent") > kinds.index("ToolResultEndEvent")
    assert events[-1].msg.get_text_content() == "answered"
    model.assert_complete()
