"""The compact state JSON (schema version 2): what it leaves out, and that it loads back."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tether.message import (
    AssistantMsg,
    Base64Source,
    ChatUsage,
    DataBlock,
    HintBlock,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.permission import PermissionContext, PermissionRule
from tether.state import SCHEMA_VERSION, AgentState, ReplyCursor
from tether.testing._states import rich_state


def _json(state: AgentState) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(state.model_dump_json())
    return out


def _round_trip(state: AgentState) -> AgentState:
    loaded = AgentState.model_validate_json(state.model_dump_json())
    assert loaded == state
    assert loaded.model_dump() == state.model_dump()
    return loaded


def test_an_empty_state_writes_only_its_version_and_id() -> None:
    state = AgentState()
    assert _json(state) == {"schema_version": SCHEMA_VERSION, "session_id": state.session_id}
    assert SCHEMA_VERSION == 3
    _round_trip(state)


def test_defaults_are_left_out_but_discriminators_stay() -> None:
    state = AgentState()
    state.add_message(UserMsg("user", [TextBlock(text="a"), HintBlock(hint="h")]))
    data = _json(state)
    (msg,) = data["context"]
    assert set(msg) == {"role", "content", "id", "created_at"}  # the name is the role
    assert [b["type"] for b in msg["content"]] == ["text", "hint"]
    _round_trip(state)


def test_a_string_message_is_stored_as_its_text() -> None:
    msg = UserMsg("user", "hello")
    assert msg.content[0].id == f"{msg.id}.0"
    state = AgentState(context=[msg])
    assert _json(state)["context"][0]["content"] == "hello"
    loaded = _round_trip(state)
    assert loaded.context[0].content[0].id == f"{msg.id}.0"


def test_made_up_block_ids_are_stored_and_derived_ones_are_not() -> None:
    msg = AssistantMsg("a", [TextBlock(text="x", id="t-1"), ThinkingBlock(thinking="y")])
    msg.content[1].id = f"{msg.id}.1"
    blocks = _json(AgentState(context=[msg]))["context"][0]["content"]
    assert blocks == [
        {"type": "text", "text": "x", "id": "t-1"},
        {"type": "thinking", "thinking": "y"},
    ]
    _round_trip(AgentState(context=[msg]))


def test_a_moved_block_keeps_its_id() -> None:
    msg = UserMsg("user", "first")
    msg.content.insert(0, HintBlock(hint="before", id=f"{msg.id}.0"))
    blocks = _json(AgentState(context=[msg]))["context"][0]["content"]
    assert blocks[1]["id"] == f"{msg.id}.0"  # no longer at position 0: written out
    assert "id" not in blocks[0]
    _round_trip(AgentState(context=[msg]))


def test_a_result_names_its_tool_once_and_answered_calls_have_no_state() -> None:
    msg = AssistantMsg(
        "a",
        [
            ToolCallBlock(id="c1", name="add", state=ToolCallState.FINISHED),
            ToolCallBlock(id="c2", name="ask", state=ToolCallState.ASKING),
            ToolResultBlock(id="c1", name="add", output="3"),
        ],
    )
    blocks = _json(AgentState(context=[msg]))["context"][0]["content"]
    assert blocks == [  # the result right after its run of calls folds into its call
        {"type": "tool_call", "id": "c1", "name": "add", "result": "3"},
        {"type": "tool_call", "id": "c2", "name": "ask", "state": "asking"},
    ]
    _round_trip(AgentState(context=[msg]))
    msg.content.insert(2, TextBlock(text="between", id="t"))  # now it stays a flat block
    blocks = _json(AgentState(context=[msg]))["context"][0]["content"]
    assert blocks[1:] == [
        {"type": "tool_call", "id": "c2", "name": "ask", "state": "asking"},
        {"type": "text", "text": "between", "id": "t"},
        {"type": "tool_result", "id": "c1", "output": "3"},
    ]
    assert blocks[0] == {"type": "tool_call", "id": "c1", "name": "add"}
    _round_trip(AgentState(context=[msg]))


@pytest.mark.parametrize("state", list(ToolCallState))
def test_every_call_state_round_trips_answered_or_not(state: ToolCallState) -> None:
    for answered in (False, True):
        blocks: list[Any] = [ToolCallBlock(id="c", name="t", state=state)]
        if answered:
            blocks.append(ToolResultBlock(id="c", name="t"))
        _round_trip(AgentState(context=[AssistantMsg("a", blocks)]))


def test_a_result_whose_name_differs_from_its_call_keeps_it() -> None:
    msg = AssistantMsg(
        "a", [ToolCallBlock(id="c", name="one"), ToolResultBlock(id="c", name="other")]
    )
    blocks = _json(AgentState(context=[msg]))["context"][0]["content"]
    assert blocks[1]["name"] == "other"
    orphan = AssistantMsg("a", [ToolResultBlock(id="x", name="lonely")])
    assert _json(AgentState(context=[orphan]))["context"][0]["content"][0]["name"] == "lonely"
    _round_trip(AgentState(context=[msg, orphan]))


def test_nested_unions_keep_their_type() -> None:
    msg = UserMsg(
        "user",
        [
            DataBlock(source=Base64Source(media_type="image/png", data="AA==")),
            ToolResultBlock(id="r", name="t", output=[TextBlock(text="x"), TextBlock(text="y")]),
        ],
    )
    blocks = _json(AgentState(context=[msg]))["context"][0]["content"]
    assert blocks[0]["source"]["type"] == "base64"
    assert [b["type"] for b in blocks[1]["output"]] == ["text", "text"]
    _round_trip(AgentState(context=[msg]))


def test_the_head_leaves_out_defaults_and_keeps_what_was_set() -> None:
    state = AgentState(
        permission_context=PermissionContext(deny_rules=[PermissionRule.parse("Bash(rm:*)")]),
        usage=ChatUsage(input_tokens=3, cost=0.5),
        reply=ReplyCursor(reply_id="r", structured_json_schema={"type": "object"}),
        token_anchor=7,
    )
    data = _json(state)
    assert data["permission_context"] == {
        "deny_rules": [{"tool_name": "Bash", "rule_content": "rm:*", "behavior": "deny"}]
    }
    assert data["usage"] == {"input_tokens": 3, "cost": 0.5}
    assert data["reply"] == {"reply_id": "r", "structured_json_schema": {"type": "object"}}
    assert data["token_anchor"] == 7 and "summary" not in data and "plugins" not in data
    _round_trip(state)


def test_a_rich_state_round_trips() -> None:
    state = rich_state(12)
    state.context[0].metadata["nested"] = {"a": [1, {"b": None}]}
    _round_trip(state)


def test_a_python_dump_stays_the_full_form() -> None:
    state = AgentState(context=[UserMsg("user", "hi")])
    full = state.model_dump()
    assert full["context"][0]["content"][0]["type"] == "text"
    assert full["context"][0]["metadata"] == {} and full["usage"]["cost"] is None
    assert AgentState.model_validate(full) == state


def test_the_cursor_json_schema_has_its_own_name_and_the_old_one_still_reads() -> None:
    cursor = ReplyCursor(reply_id="r", structured_schema={"type": "object"})
    assert cursor.structured_json_schema == {"type": "object"}
    assert cursor.structured_schema == {"type": "object"}
    assert "structured_schema" not in cursor.model_dump()
    with pytest.raises(AttributeError):
        cursor.structured_schema = None  # type: ignore[misc]  # read-only


def test_a_compact_message_written_by_hand_loads() -> None:
    data = {
        "context": [
            {"name": "u", "role": "user", "content": "hi", "id": "m1"},
            {
                "name": "a",
                "role": "assistant",
                "id": "m2",
                "content": [
                    {"type": "tool_call", "id": "c", "name": "t"},
                    {"type": "tool_result", "id": "c", "output": "ok"},
                    {"type": "text", "text": "done"},
                ],
            },
        ]
    }
    state = AgentState.model_validate_json(json.dumps(data))
    user, reply = state.context
    assert isinstance(user, UserMsg) and user.content[0].id == "m1.0"
    call, result, text = reply.content
    assert isinstance(call, ToolCallBlock) and call.state is ToolCallState.FINISHED
    assert isinstance(result, ToolResultBlock) and result.name == "t"
    assert isinstance(text, TextBlock) and text.id == "m2.2"


def test_a_bad_compact_message_is_a_state_error_not_a_crash() -> None:
    from tether.errors import StateError

    data = {
        "context": [
            {"name": "a", "role": "assistant", "content": [{"type": "tool_result", "id": [1]}]}
        ]
    }
    with pytest.raises(StateError, match="not a valid AgentState"):
        AgentState.model_validate_json(json.dumps(data))
    with pytest.raises(StateError, match="not a valid AgentState"):
        AgentState.model_validate(data)


def test_msg_equality_ignores_the_role_class() -> None:
    msg = Msg(name="u", role="user", content="x", id="m")
    assert msg == UserMsg("u", "x", id="m", created_at=msg.created_at)


def test_the_fast_dump_writes_what_pydantic_writes() -> None:
    from pydantic import TypeAdapter

    state = rich_state(12)
    state.add_message(UserMsg("user", "plain"))
    state.add_message(
        AssistantMsg(
            "a",
            [
                ToolCallBlock(id="p", name="t", state=ToolCallState.PENDING),
                ToolResultBlock(id="p", name="t", output="answered, still pending"),
            ],
        )
    )
    fast = state.model_dump_json()
    assert fast == state.model_dump_json(round_trip=False)  # pydantic's own path
    assert fast.encode() == TypeAdapter(AgentState).dump_json(state)
    assert json.loads(fast)["context"][-1]["content"][0]["state"] == "pending"
    _round_trip(state)
