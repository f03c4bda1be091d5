"""The compiled reader of the state's JSON reads exactly what the checked path reads."""

from __future__ import annotations

import json
import random
from typing import Any

import pytest

from tether.errors import StateError
from tether.message import (
    AssistantMsg,
    Base64Source,
    DataBlock,
    HintBlock,
    Msg,
    SystemMsg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.state import AgentState
from tether.state._fastload import fast_validator
from tether.testing._states import edit_randomly, rich_state


def _states() -> list[AgentState]:
    states = [AgentState(), rich_state(), rich_state(40)]
    rng = random.Random(7)
    for _ in range(30):
        state = rich_state(12)
        for _ in range(5):
            edit_randomly(state, rng)
        states.append(state)
    shapes: list[list[Any]] = [
        [ToolCallBlock(id="1", name="t"), ToolResultBlock(id="1", name="t", output="x")],
        [
            ToolCallBlock(id="1", name="t", input='{"a": [1, 2.5, "ü"]}'),
            ToolCallBlock(id="2", name="u", state=ToolCallState.ASKING),
            ToolResultBlock(id="1", name="t", state=ToolResultState.ERROR, metadata={"k": 1}),
            TextBlock(text="after"),
        ],
        [ToolResultBlock(id="9", name="orphan"), HintBlock(hint="h")],
        [
            ToolCallBlock(id="1", name="t", state=ToolCallState.PENDING),
            ToolResultBlock(id="1", name="t"),
        ],
        [
            ThinkingBlock(thinking="hm", signature="s"),
            DataBlock(source=Base64Source(media_type="image/png", data="AA==")),
            ToolCallBlock(id="1", name="t"),
            ToolResultBlock(id="1", name="t", output=[TextBlock(text="a")]),
        ],
    ]
    context: list[Msg] = [UserMsg("user", "hi"), SystemMsg("system", "be brief")]
    context += [AssistantMsg("bench", blocks) for blocks in shapes]
    for msg in context[2:]:  # half of the blocks with derivable ids
        for i, block in enumerate(msg.content):
            if i % 2 and not isinstance(block, ToolCallBlock | ToolResultBlock):
                block.id = f"{msg.id}.{i}"
    states.append(AgentState(context=context))
    return states


@pytest.mark.parametrize("index", range(len(_states())))
def test_the_compiled_reader_reads_what_the_checked_path_reads(index: int) -> None:
    state = _states()[index]
    text = state.model_dump_json()
    fast = fast_validator(AgentState).validate_json(text)
    checked = AgentState.model_validate(json.loads(text))
    assert type(fast) is AgentState
    assert fast == checked == state
    assert fast.model_dump() == checked.model_dump()
    for got, want in zip(fast.context, checked.context, strict=True):
        assert type(got) is type(want)
        assert [type(b) for b in got.content] == [type(b) for b in want.content]
    assert AgentState.model_validate_json(fast.model_dump_json()) == state


BAD = [
    # a flat result that names no tool and answers no call
    '{"context": [{"role": "assistant", "content": [{"type": "tool_result", "id": "c"}]}]}',
    # a folded result with a field results do not have
    '{"context": [{"role": "assistant", "content": [{"type": "tool_call", "id": "c", '
    '"name": "t", "result": {"name": "x"}}]}]}',
    '{"context": [{"role": "robot", "content": "hi"}]}',
    '{"context": [{"role": "user", "name": null, "content": "hi"}]}',
    '{"context": [{"role": "user", "content": [{"type": "text", "text": "a", "id": null}]}]}',
    '{"context": [{"role": "user", "content": [{"type": "tool_call", "id": "c", "name": "t", '
    '"input": [1]}]}]}',
    '{"context": [{"role": "user", "content": [{"type": "tool_call", "id": "c", "name": "t", '
    '"state": null}]}]}',
    '{"context": [{"role": "user", "content": "x", "extra": 1}]}',
]


@pytest.mark.parametrize("text", BAD)
def test_what_the_checked_path_refuses_the_compiled_reader_refuses(text: str) -> None:
    with pytest.raises(ValueError):  # pydantic's ValidationError
        fast_validator(AgentState).validate_json(text)
    with pytest.raises(StateError):
        AgentState.model_validate_json(text)


def test_a_loaded_state_keeps_one_fields_set_per_class() -> None:
    state = AgentState.model_validate_json(rich_state().model_dump_json())
    sets = {id(b.__pydantic_fields_set__) for m in state.context for b in m.content}
    kinds = {type(b) for m in state.context for b in m.content}
    assert len(sets) == len(kinds)


def _models(state: AgentState) -> list[Any]:
    out: list[Any] = []
    for msg in state.context:
        out.append(msg)
        for block in msg.content:
            out.append(block)
            if isinstance(block, ToolResultBlock) and not isinstance(block.output, str):
                out += block.output
    return out


@pytest.mark.parametrize("index", range(len(_states())))
def test_the_compiled_reader_builds_models_as_the_checked_path_does(index: int) -> None:
    # Same values in the same order (repr, dumps and the JSON memo follow `__dict__`'s
    # order), the same classes, and no value left for `_finish` to fill.
    text = _states()[index].model_dump_json()
    fast = fast_validator(AgentState).validate_json(text)
    checked = AgentState.model_validate(json.loads(text))
    pairs = list(zip(_models(fast), _models(checked), strict=True))
    for got, want in pairs:
        assert type(got) is type(want)
        assert list(vars(got).items()) == list(vars(want).items())
        assert None not in (got.__dict__.get(k, 0) for k in ("name", "id", "state"))
        assert got.__pydantic_extra__ is None and got.__pydantic_private__ is None
    assert fast.model_dump_json() == checked.model_dump_json() == text
