"""Streamed block ids are never reused for other content, even when a step is tried again.

This is what keeps a text block's id from being derived from its place in the reply alone
(`<reply id>.<position>`): a step whose stream broke commits nothing, so the step that
`reply(None)` runs next starts at the same place, and its block would get the id the
broken stream already sent, with other text (a client appending deltas by block id would
join the two). A derived-id scheme must pass these tests.

The loop's scheme (`tether._loop.places`) derives ids only in the run that started the
reply, at places that run has not streamed yet, and never after a failed or retried step:
the broken stream's block below has the derived id, the step tried again a fresh one
(tests/state/test_state_derived_block_ids.py checks the rest).
"""

from __future__ import annotations

from typing import Any

import pytest

from tether._ids import derived_block_id
from tether.agent import Agent, ModelConfig
from tether.errors import StreamInterruptedError
from tether.event import TextBlockStartEvent
from tether.message import TextBlock, UserMsg
from tether.model import ScriptedChatModel, TextDelta
from tether.state import AgentState


class _BreaksOnce(ScriptedChatModel):
    """Streams some text and breaks (unless `whole`); the next call streams a whole answer."""

    def __init__(self, *, whole: bool = False) -> None:
        super().__init__([])
        self.whole = whole

    async def stream(self, request: Any) -> Any:  # type: ignore[override]
        self.calls.append(request)
        if len(self.calls) == 1 and not self.whole:
            yield TextDelta(text="partial ")
            raise ConnectionError("reset by peer")
        yield TextDelta(text="whole answer")


async def _starts(agent: Agent, inputs: Any) -> list[str]:
    ids: list[str] = []
    async for event in agent.reply_stream(inputs):
        if isinstance(event, TextBlockStartEvent):
            ids.append(event.block_id)
    return ids


async def test_a_step_tried_again_after_a_broken_stream_sends_a_new_block_id() -> None:
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=_BreaksOnce(),
        model_config=ModelConfig(initial_retry_delay=0.0),
    )
    sent: list[str] = []
    with pytest.raises(StreamInterruptedError):
        async for event in agent.reply_stream(UserMsg("user", "x")):
            if isinstance(event, TextBlockStartEvent):
                sent.append(event.block_id)
    again = await _starts(agent, None)
    assert len(sent) == 1 and len(again) == 1
    assert sent[0] == derived_block_id(agent.state.context[-1].id, 0)  # the risky case
    assert again[0] != sent[0]
    (block,) = agent.state.context[-1].content
    assert isinstance(block, TextBlock) and block.id == again[0]


async def test_a_step_tried_again_in_another_process_sends_a_new_block_id() -> None:
    # The broken step's process is gone; another loads the last saved state and goes on.
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=_BreaksOnce(),
        model_config=ModelConfig(initial_retry_delay=0.0),
    )
    saved: list[str] = []

    async def checkpoint(state: AgentState) -> None:
        saved.append(state.model_dump_json())

    sent: list[str] = []
    with pytest.raises(StreamInterruptedError):
        async for event in agent.reply_stream(UserMsg("user", "x"), checkpoint=checkpoint):
            if isinstance(event, TextBlockStartEvent):
                sent.append(event.block_id)
    other = Agent(
        name="bot",
        system_prompt="p",
        model=_BreaksOnce(whole=True),
        state=AgentState.model_validate_json(saved[-1]),
    )
    again = await _starts(other, None)
    assert len(sent) == 1 and len(again) == 1
    assert again[0] != sent[0]
    (block,) = other.state.context[-1].content
    assert isinstance(block, TextBlock) and block.id == again[0]
    # whatever the id, it survives the state's JSON
    reloaded = AgentState.model_validate_json(other.state.model_dump_json())
    assert reloaded.context[-1].content[0].id == again[0]
