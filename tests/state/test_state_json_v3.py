"""Schema version 3: results fold into their calls, object inputs, a name equal to the role
left out, millisecond `Z` times; version-2 JSON still loads."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from tether.message import (
    AssistantMsg,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.state import SCHEMA_VERSION, AgentState

FIXTURES = Path(__file__).parent / "fixtures"


def _blocks(msg: Msg) -> list[Any]:
    out: list[Any] = json.loads(AgentState(context=[msg]).model_dump_json())["context"][0][
        "content"
    ]
    return out


def _round_trip(state: AgentState) -> AgentState:
    loaded = AgentState.model_validate_json(state.model_dump_json())
    assert loaded == state
    assert loaded.model_dump() == state.model_dump()
    return loaded


def test_the_v2_output_of_the_loop_workload_loads_and_is_rewritten_shorter() -> None:
    text = (FIXTURES / "state_v2_loop.json").read_text()
    v2 = json.loads(text)
    assert v2["schema_version"] == 2
    state = AgentState.model_validate_json(text)
    assert state.schema_version == SCHEMA_VERSION == 3
    first = state.context[1]
    assert first.name == "bench" and [b.type for b in first.content] == [
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "text",
    ]
    assert first.tool_calls[0].input == '{"a": 1, "b": 2}'
    assert first.tool_calls[0].state == ToolCallState.FINISHED
    assert first.tool_results[0].name == "add" and first.tool_results[0].output == "3"
    assert first.content[4].id == v2["context"][1]["content"][4]["id"]
    assert first.created_at == v2["context"][1]["created_at"]  # old times kept as written
    error = state.context[3].tool_results[1]
    assert error.state == ToolResultState.ERROR and error.output == "boom"
    assert state.context[-1].name == "alice"
    again = json.loads(state.model_dump_json())
    assert again["schema_version"] == 3
    assert again["context"][1]["content"][0] == {
        "type": "tool_call",
        "id": "c1",
        "name": "add",
        "input": {"a": 1, "b": 2},
        "result": "3",
    }
    assert again["context"][3]["content"][1]["result"] == {"output": "boom", "state": "error"}
    assert "name" not in again["context"][0] and again["context"][-1]["name"] == "alice"
    assert len(state.model_dump_json()) < 0.9 * len(json.dumps(v2, separators=(",", ":")))
    _round_trip(state)


def test_a_name_equal_to_the_role_is_left_out_and_comes_back() -> None:
    named = UserMsg("alice", "hi")
    plain = UserMsg("user", "hi")
    system = Msg(name="system", role="system", content=[])
    state = AgentState(context=[named, plain, system])
    raw = json.loads(state.model_dump_json())["context"]
    assert raw[0]["name"] == "alice" and "name" not in raw[1] and "name" not in raw[2]
    loaded = _round_trip(state)
    assert [m.name for m in loaded.context] == ["alice", "user", "system"]


def test_new_messages_carry_a_millisecond_utc_time() -> None:
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", UserMsg("u", "x").created_at)


@pytest.mark.parametrize(
    ("text", "stored"),
    [
        ('{"a": 1, "b": [2.5, "ü"]}', {"a": 1, "b": [2.5, "ü"]}),  # what json.dumps writes
        ('{"a":1}', '{"a":1}'),  # other spacing: kept as the string
        ('{"a": 1, "a": 2}', '{"a": 1, "a": 2}'),  # a repeated key would be lost
        ('{"a": NaN}', '{"a": NaN}'),  # not JSON an object can hold
        ('{"a": "\\u00fc"}', '{"a": "\\u00fc"}'),  # ensure_ascii spelling
        ("[1, 2]", "[1, 2]"),
        ("not json", "not json"),
    ],
)
def test_a_call_input_is_an_object_only_when_it_reads_back_exactly(text: str, stored: Any) -> None:
    msg = AssistantMsg("a", [ToolCallBlock(id="c", name="t", input=text)])
    assert _blocks(msg)[0]["input"] == stored
    loaded = _round_trip(AgentState(context=[msg]))
    assert loaded.context[0].tool_calls[0].input == text


def test_results_fold_only_where_a_reader_puts_them_back() -> None:
    def call(i: str, name: str = "t") -> ToolCallBlock:
        return ToolCallBlock(id=i, name=name, state=ToolCallState.FINISHED)

    def result(i: str, name: str = "t", **kw: Any) -> ToolResultBlock:
        return ToolResultBlock(id=i, name=name, output=f"out {i}", **kw)

    shapes: list[list[Any]] = [
        [call("1"), result("1"), call("2"), result("2")],  # two runs: the first stays flat
        [call("1"), call("2"), result("2"), result("1")],  # out of order: r1 stays flat
        [call("1"), call("2"), result("1", name="other")],  # another name: flat
        [call("1"), call("1"), result("1"), result("1")],  # a repeated id
        [call("1"), call("2"), call("3"), result("1"), result("3")],  # a call left pending
        [call("1"), result("1", state=ToolResultState.ERROR, metadata={"k": 1})],
        [result("0"), call("1"), result("1"), TextBlock(text="t", id="x")],
        [call("1"), result("1"), result("1")],  # a second result for the same call
    ]
    for blocks in shapes:
        msg = AssistantMsg("a", blocks)
        _round_trip(AgentState(context=[msg]))
    folded = _blocks(AssistantMsg("a", shapes[0]))
    assert [b["type"] for b in folded] == ["tool_call", "tool_result", "tool_call"]
    assert folded[2]["result"] == "out 2"
    assert _blocks(AssistantMsg("a", shapes[5]))[0]["result"] == {
        "output": "out 1",
        "state": "error",
        "metadata": {"k": 1},
    }


def test_a_compact_message_body_validates_as_a_msg() -> None:
    body = {
        "role": "assistant",
        "id": "m",
        "created_at": "t",
        "content": [
            {"type": "tool_call", "id": "c", "name": "t", "input": {"x": 1}, "result": "ok"},
            {"type": "text", "text": "done"},
        ],
    }
    msg = Msg.model_validate_json(json.dumps(body))
    assert msg.name == "assistant"
    assert [b.type for b in msg.content] == ["tool_call", "tool_result", "text"]
    assert msg.tool_calls[0].state == ToolCallState.FINISHED and msg.tool_calls[0].input == (
        '{"x": 1}'
    )
    assert msg.tool_results[0].name == "t" and msg.content[2].id == "m.2"
    assert Msg.model_validate(body) == msg
    assert body["content"][0]["result"] == "ok"  # a caller's dict is not changed


def test_a_folded_result_with_a_bad_field_is_refused() -> None:
    body = '{"schema_version": 3, "context": [{"role": "assistant", "content": [' + (
        '{"type": "tool_call", "id": "c", "name": "t", "result": {"bogus": 1}}]}]}'
    )
    from tether.errors import StateError

    with pytest.raises(StateError):
        AgentState.model_validate_json(body)
