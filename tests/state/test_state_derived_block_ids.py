"""Derived text and thinking block ids (`<reply id>.<place>`): where they are given, and that
they never collide and never change across dump and load.

The run that started a reply gives its streamed text and thinking blocks the id derived
from their place, which the state's JSON leaves out; a run that resumes or continues a
reply, a step tried again, and a place already streamed in the run get fresh random ids,
which are stored (see `tether._loop.places`).
"""

from __future__ import annotations

import json
import random
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from tether._ids import derived_block_id
from tether._loop.places import PlacedAssembler
from tether._loop.run import Run
from tether.agent import Agent, ModelConfig, ReActConfig
from tether.app.storage import SQLiteStorage
from tether.errors import StreamInterruptedError
from tether.event import (
    ConfirmResult,
    TextBlockStartEvent,
    ThinkingBlockStartEvent,
    UserConfirmResultEvent,
)
from tether.message import Msg, TextBlock, ThinkingBlock, UserMsg
from tether.middleware import MiddlewareBase, ReasoningCall
from tether.model import (
    ChatModelBase,
    ChatRequest,
    ScriptedChatModel,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
)
from tether.state import AgentState
from tether.tool import Toolkit, tool


@tool(is_concurrency_safe=True)
async def lookup(item: str) -> str:
    """Look up."""
    return f"{item} found"


@tool(requires_confirmation=True)
async def transfer(amount: int) -> str:
    """Transfer (asks first)."""
    return "sent"


class _Steps(ChatModelBase):
    """Thinking, text and a call on a reply's first step; thinking and text once answered."""

    def __init__(self, call: str = "lookup") -> None:
        super().__init__("steps")
        self.call = call

    async def stream(self, request: ChatRequest) -> Any:
        last = request.messages[-1]
        yield ThinkingDelta(text="let me think", signature="sig")
        if last.role == "assistant" and any(b.type == "tool_result" for b in last.content):
            yield TextDelta(text="all done")
            return
        yield TextDelta(text="looking it up")
        args = '{"item": "x"}' if self.call == "lookup" else '{"amount": 3}'
        yield ToolCallDelta(
            index=0, id=f"c_{len(request.messages)}", name=self.call, arguments=args
        )


def _agent(model: ChatModelBase, state: AgentState | None = None) -> Agent:
    return Agent(
        "a",
        "p",
        model,
        Toolkit(tools=[lookup, transfer]),
        state=state,
        model_config=ModelConfig(initial_retry_delay=0.0),
    )


def _ids(state: AgentState) -> list[tuple[int, int, str]]:
    return [
        (m, b, block.id)
        for m, msg in enumerate(state.context)
        for b, block in enumerate(msg.content)
    ]


def _streamed_blocks(state: AgentState) -> list[tuple[Msg, int, TextBlock | ThinkingBlock]]:
    return [
        (msg, i, block)
        for msg in state.context
        for i, block in enumerate(msg.content)
        if isinstance(block, TextBlock | ThinkingBlock) and msg.role == "assistant"
    ]


def _loads(state: AgentState) -> list[AgentState]:
    """The state through both load paths: the compiled one and the checked one."""
    text = state.model_dump_json()
    return [AgentState.model_validate_json(text), AgentState.model_validate(json.loads(text))]


def _assert_unique(state: AgentState) -> None:
    for msg in state.context:
        ids = [b.id for b in msg.content if not b.type == "tool_result"]
        assert len(ids) == len(set(ids)), f"ids repeat in a message: {ids}"
    streamed = [b.id for _, _, b in _streamed_blocks(state)]
    assert len(streamed) == len(set(streamed)), f"ids repeat in the state: {streamed}"


async def test_the_run_that_started_the_reply_derives_its_ids_and_the_json_leaves_them_out() -> (
    None
):
    agent = _agent(_Steps())
    await agent.reply(UserMsg("user", "go"))
    blocks = _streamed_blocks(agent.state)
    assert len(blocks) == 4  # thinking, text, (call, result), thinking, text
    for msg, place, block in blocks:
        assert block.id == derived_block_id(msg.id, place)
    text = agent.state.model_dump_json()
    for _, _, block in blocks:
        assert block.id not in text  # derivable: not stored
    for loaded in _loads(agent.state):
        assert _ids(loaded) == _ids(agent.state)


async def test_the_stream_sends_the_ids_the_state_keeps() -> None:
    agent = _agent(_Steps())
    sent = [
        e.block_id
        async for e in agent.reply_stream(UserMsg("user", "go"))
        if isinstance(e, TextBlockStartEvent | ThinkingBlockStartEvent)
    ]
    assert sent == [b.id for _, _, b in _streamed_blocks(agent.state)]
    assert len(set(sent)) == len(sent)


async def test_a_resumed_reply_gives_fresh_ids_which_are_stored() -> None:
    agent = _agent(_Steps(call="transfer"))
    await agent.reply(UserMsg("user", "go"))
    pending = agent.state.pending
    assert pending is not None and pending.is_paused
    before = {b.id for _, _, b in _streamed_blocks(agent.state)}
    call = pending.awaiting_confirmation[0]
    resume = UserConfirmResultEvent(
        reply_id=pending.reply_id, confirm_results=[ConfirmResult(confirmed=True, tool_call=call)]
    )
    await agent.reply(resume)
    after = _streamed_blocks(agent.state)
    fresh = [(msg, place, b) for msg, place, b in after if b.id not in before]
    assert len(fresh) == 2  # the step after the pause: thinking, text
    for msg, place, block in fresh:
        assert block.id != derived_block_id(msg.id, place)
    text = agent.state.model_dump_json()
    assert all(block.id in text for _, _, block in fresh)  # stored
    _assert_unique(agent.state)
    for loaded in _loads(agent.state):
        assert _ids(loaded) == _ids(agent.state)


class _BreaksFirst(ChatModelBase):
    """The first call streams text and breaks; every later call answers whole."""

    def __init__(self) -> None:
        super().__init__("breaks")
        self.calls = 0

    async def stream(self, request: ChatRequest) -> Any:
        self.calls += 1
        yield TextDelta(text="partial " if self.calls == 1 else "whole answer")
        if self.calls == 1:
            raise ConnectionError("reset by peer")


class _TriesAgain(MiddlewareBase):
    """An `on_reasoning` hook that runs a broken step once more, in the same run."""

    async def on_reasoning(
        self, call: ReasoningCall, call_next: Callable[[ReasoningCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        try:
            async for event in call_next(call):
                yield event
        except StreamInterruptedError:
            async for event in call_next(call):
                yield event


async def test_a_step_tried_again_in_the_same_run_sends_a_new_id() -> None:
    agent = _agent(_BreaksFirst())
    agent.middlewares = (_TriesAgain(),)
    sent = [
        e.block_id
        async for e in agent.reply_stream(UserMsg("user", "go"))
        if isinstance(e, TextBlockStartEvent)
    ]
    assert len(sent) == 2 and sent[0] != sent[1]
    msg = agent.state.context[-1]
    (block,) = msg.content
    assert isinstance(block, TextBlock) and block.text == "whole answer" and block.id == sent[1]
    assert sent[0] == derived_block_id(msg.id, 0)  # the first try derived it
    for loaded in _loads(agent.state):
        assert _ids(loaded) == _ids(agent.state)


def _run(*, derives: bool, next_place: int) -> Run:
    agent = Agent("a", "p", ScriptedChatModel([]))
    run = Run(agent=agent, state=agent.state, reply_id="r")
    run.derives_ids, run.next_place = derives, next_place
    return run


def test_a_place_this_run_already_streamed_gets_a_fresh_id() -> None:
    run = _run(derives=True, next_place=3)
    assembler = PlacedAssembler(run, 2, emit=True)
    assembler.feed(TextDelta(text="a"))  # place 2: streamed before in this run
    assembler.feed(ThinkingDelta(text="b"))  # place 3: new
    assembler.close()
    first, second = assembler.blocks
    assert first.id != "r.2" and "." not in first.id
    assert second.id == "r.3"


def test_a_run_that_may_not_derive_keeps_random_ids() -> None:
    run = _run(derives=False, next_place=0)
    assembler = PlacedAssembler(run, 0, emit=False)
    assembler.feed(TextDelta(text="a"))
    assembler.close()
    assert "." not in assembler.blocks[0].id


class _Random(ChatModelBase):
    """Random steps: thinking, text, redacted thinking and calls in random order."""

    def __init__(self, seed: int) -> None:
        super().__init__("random")
        self.rng = random.Random(seed)

    async def stream(self, request: ChatRequest) -> Any:
        rng = self.rng
        calls = 0
        for _ in range(rng.randint(1, 5)):
            kind = rng.choice(["text", "thinking", "redacted", "call"])
            if kind == "text":
                yield TextDelta(text=rng.choice(["a", "b c", ""]))
            elif kind == "thinking":
                yield ThinkingDelta(text=rng.choice(["t", "u v"]))
            elif kind == "redacted":
                yield ThinkingDelta(text="", signature="x", redacted=True)
            else:
                calls += 1
                yield ToolCallDelta(
                    index=calls, id=f"c{rng.random()}", name="lookup", arguments='{"item": "i"}'
                )


@pytest.mark.parametrize("seed", range(12))
async def test_random_replies_keep_unique_ids_across_dump_and_load(
    seed: int, tmp_path: Path
) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        record = await storage.upsert_session("u", "a", "s")
        agent = _agent(_Random(seed), record.state)
        agent.react_config = ReActConfig(max_iters=3)
        save = storage.checkpoint("u", "a", "s")
        for i in range(4):
            await agent.reply(UserMsg("user", f"q{i}"), checkpoint=save)
            _assert_unique(agent.state)
            for loaded in _loads(agent.state):
                assert _ids(loaded) == _ids(agent.state)
            # and a second dump of a loaded state writes what the first did
            assert _loads(agent.state)[0].model_dump_json() == agent.state.model_dump_json()
    async with SQLiteStorage(tmp_path / "s.db") as fresh:
        stored = await fresh.get_session("u", "a", "s")
    assert stored is not None
    assert _ids(stored.state) == _ids(agent.state)
    derived = [b.id == derived_block_id(m.id, i) for m, i, b in _streamed_blocks(agent.state)]
    assert any(derived)  # the replies' own runs derived their ids
