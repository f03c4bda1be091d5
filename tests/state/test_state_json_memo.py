"""A message's JSON is reused only while the message is unchanged: every change shows."""

from __future__ import annotations

import gc
import json
import weakref
from collections.abc import Callable

import pytest

from tether.message import (
    AssistantMsg,
    ChatUsage,
    DataBlock,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    URLSource,
    UserMsg,
    detached,
)
from tether.permission import PermissionRule
from tether.state import AgentState
from tether.state import _json as state_json


def _state() -> AgentState:
    reply = AssistantMsg(
        "a",
        [
            TextBlock(text="thinking aloud"),
            ToolCallBlock(id="c", name="t", state=ToolCallState.ASKING),
            DataBlock(source=URLSource(url="https://a/x.png")),
        ],
    )
    return AgentState(context=[UserMsg("user", "hi"), reply])


def _call(state: AgentState) -> ToolCallBlock:
    return state.context[1].tool_calls[0]


EDITS: dict[str, Callable[[AgentState], object]] = {
    "metadata filled": lambda s: s.context[0].metadata.update(k=1),
    "block appended": lambda s: s.context[0].content.append(TextBlock(text="more")),
    "block replaced": lambda s: s.context[1].content.__setitem__(0, TextBlock(text="new")),
    "content cleared": lambda s: s.context[1].content.clear(),
    "text assigned": lambda s: setattr(s.context[0].content[0], "text", "bye"),
    "call state assigned": lambda s: setattr(_call(s), "state", ToolCallState.ALLOWED),
    "result added": lambda s: s.context[1].content.append(ToolResultBlock(id="c", name="t")),
    "usage set": lambda s: setattr(s.context[1], "usage", ChatUsage(input_tokens=3)),
    "rule appended": lambda s: _call(s).suggested_rules.append(PermissionRule.parse("t")),
    "call metadata filled": lambda s: _call(s).metadata.update(sig="x"),
    "nested source changed": lambda s: setattr(s.context[1].content[2].source, "url", "b"),
    "name assigned": lambda s: setattr(s.context[1], "name", "other"),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_change_after_a_dump_is_in_the_next_dump(edit: str) -> None:
    state = _state()
    before = state.model_dump_json()
    assert state.model_dump_json() == before  # unchanged: the same JSON, from the memo
    EDITS[edit](state)
    after = state.model_dump_json()
    assert after != before
    assert AgentState.model_validate_json(after) == state


def test_a_nested_usage_changed_in_place_is_seen() -> None:
    state = _state()
    state.context[1].usage = ChatUsage(input_tokens=3)
    state.model_dump_json()
    state.context[1].usage.input_tokens = 4
    loaded = AgentState.model_validate_json(state.model_dump_json())
    assert loaded.context[1].usage == ChatUsage(input_tokens=4)


def test_a_container_emptied_again_gives_the_first_json() -> None:
    state = _state()
    first = state.model_dump_json()
    state.context[0].metadata["k"] = 1
    assert "k" in state.model_dump_json()
    del state.context[0].metadata["k"]
    assert state.model_dump_json() == first


def test_a_filled_message_is_written_afresh_each_time() -> None:
    msg = UserMsg("u", "x", metadata={"n": 1})
    state = AgentState(context=[msg])
    state.model_dump_json()
    msg.metadata["n"] = 2
    assert json.loads(state.model_dump_json())["context"][0]["metadata"] == {"n": 2}


def test_a_new_message_at_a_reused_address_is_not_mistaken_for_the_old() -> None:
    # The memo lives on the message (no table keyed by address): a freed message takes its
    # memo along, and reference counting frees it at `del` (no reference cycle, see below),
    # so no collection is needed for the next one to reuse the address.
    for i in range(30):
        msg = Msg(name="u", role="user", content=f"text {i}", id="same", created_at="t")
        body = json.loads(AgentState(context=[msg]).model_dump_json())["context"][0]
        assert body["content"] == f"text {i}"
        del msg


def test_the_memo_lives_and_goes_with_its_message() -> None:
    state = AgentState(context=[UserMsg("u", str(i)) for i in range(12)])
    first = state.model_dump_json()
    assert all(m._json_memo is not None for m in state.context)  # kept on the message
    assert state.model_dump_json() == first
    assert AgentState.model_validate_json(first) == state
    assert not hasattr(state_json, "_MEMO")  # nothing global that could grow


def test_a_memo_makes_no_reference_cycle() -> None:
    # A dropped state (dumped, or loaded and remembered) is freed at once by reference
    # counting, not left for the cyclic collector to find.
    dumped = _state()
    dumped.model_dump_json()
    loaded = AgentState.model_validate_json(dumped.model_dump_json())
    for msg, body in zip(loaded.context, state_json.compact_context(dumped.context), strict=True):
        state_json.remember_message_json(msg, json.dumps(body).encode())
    assert all(m._json_memo is not None for m in dumped.context + loaded.context)
    refs = [weakref.ref(m) for m in dumped.context + loaded.context]
    gc.disable()
    try:
        del dumped, loaded, msg
        assert [r() for r in refs] == [None] * len(refs)
    finally:
        gc.enable()


def test_a_copy_does_not_take_the_memo_of_its_original() -> None:
    state = _state()
    state.model_dump_json()
    copy = detached(state.context[0])
    assert getattr(copy, "_json_memo", None) is None
    copy.content[0].text = "changed"
    assert json.loads(AgentState(context=[copy]).model_dump_json())["context"][0]["content"] == (
        "changed"
    )


def test_a_block_swapped_for_an_equal_one_and_then_changed_is_seen() -> None:
    state = _state()
    state.model_dump_json()
    twin = detached(state.context[1].content[0])
    state.context[1].content[0] = twin
    state.model_dump_json()
    twin.text = "other"
    assert AgentState.model_validate_json(state.model_dump_json()) == state


def test_a_list_of_rules_or_output_blocks_changed_in_place_is_seen() -> None:
    state = _state()
    call = _call(state)
    call.suggested_rules = [PermissionRule(tool_name="t")]
    state.context[1].content.append(ToolResultBlock(id="c", name="t", output=[TextBlock(text="a")]))
    state.model_dump_json()
    call.suggested_rules.append(PermissionRule(tool_name="u"))  # (a rule itself is frozen)
    out = state.context[1].tool_results[0].output
    assert isinstance(out, list)
    out[0].text = "b"
    out.append(TextBlock(text="c"))
    assert AgentState.model_validate_json(state.model_dump_json()) == state


def test_a_message_remembered_as_loaded_gives_its_stored_bytes_until_it_changes() -> None:
    from tether.state._json import message_json, remember_message_json

    state = _state()
    stored = [message_json(m) for m in state.context]
    loaded = AgentState.model_validate_json(state.model_dump_json())
    old_form = b'{"name":"user","role":"user","id":"x","content":"hi"}'  # as an older writer
    for msg, body in zip(loaded.context, [old_form, stored[1]], strict=True):
        remember_message_json(msg, body)
    assert message_json(loaded.context[0]) is old_form  # not serialised again
    assert message_json(loaded.context[1]) is stored[1]
    loaded.context[0].content[0].text = "changed"
    assert json.loads(message_json(loaded.context[0]))["content"] == "changed"
    assert message_json(loaded.context[1]) is stored[1]


def test_a_wrong_value_assigned_unvalidated_is_still_written() -> None:
    from tether.state._json import message_json

    msg = UserMsg("user", "x")
    msg.content = "a plain string"  # type: ignore[assignment]
    assert json.loads(message_json(msg))["content"] == "a plain string"
    assert json.loads(message_json("not a message")) == "not a message"  # type: ignore[arg-type]
