"""Save-point snapshots reuse the copies of what did not change since the last one."""

from __future__ import annotations

from tether._loop.checkpoint import restore, snapshot
from tether.message import AssistantMsg, ChatUsage, TextBlock, ToolCallBlock, ToolCallState, UserMsg
from tether.state import AgentState, ReplyCursor


def _state() -> AgentState:
    state = AgentState()
    state.add_message(UserMsg("user", "hi"))
    call = ToolCallBlock(id="c1", name="add", input="{}")
    state.add_message(AssistantMsg(name="a", content=[TextBlock(text="t"), call], id="r1"))
    state.reply = ReplyCursor(reply_id="r1")
    state.usage = ChatUsage(input_tokens=1)
    return state


def test_unchanged_values_share_the_last_copy() -> None:
    state = _state()
    first = snapshot(state)
    second = snapshot(state, first)
    assert second.head["usage"] is first.head["usage"]
    assert second.blocks == first.blocks
    assert second.reply_msg is not first.reply_msg  # a new message, the same block copies


def test_values_changed_in_place_are_copied_again_and_restored() -> None:
    state = _state()
    msg = state.context[-1]
    call = msg.content[1]
    assert isinstance(call, ToolCallBlock)
    first = snapshot(state)
    state.usage.input_tokens = 5  # the same objects, changed in place
    call.state = ToolCallState.ALLOWED
    state.tool_state_for("add")["n"] = 1
    second = snapshot(state, first)
    state.usage.input_tokens = 9
    call.state = ToolCallState.RUNNING
    state.tool_state["add"]["n"] = 2
    msg.content.append(TextBlock(text="later"))
    restore(state, second)
    assert state.usage.input_tokens == 5
    assert state.tool_state == {"add": {"n": 1}}
    kept = state.context[-1]
    assert [type(b) for b in kept.content] == [TextBlock, ToolCallBlock]
    assert kept.content[1].state is ToolCallState.ALLOWED  # type: ignore[union-attr]
    assert kept.id == "r1" and kept.model_fields_set == msg.model_fields_set
