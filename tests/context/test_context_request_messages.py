"""The messages of one model request: each request's copies share nothing with the next's."""

from __future__ import annotations

from tether._loop.context_step import request_messages
from tether.message import AssistantMsg, HintBlock, TextBlock, UserMsg
from tether.state import AgentState, ReplyCursor


def _state() -> AgentState:
    state = AgentState()
    state.add_message(UserMsg("user", "hi"))
    state.add_message(AssistantMsg(name="a", content=[TextBlock(text="so far")], id="r1"))
    state.reply = ReplyCursor(reply_id="r1")
    return state


def test_a_changed_system_message_does_not_reach_the_next_request() -> None:
    state = _state()
    first = request_messages(state, "Be brief.", None)[0]
    first.content[0].text = "changed"  # type: ignore[union-attr]
    first.content.append(TextBlock(text="more"))
    first.metadata["k"] = 1
    second = request_messages(state, "Be brief.", None)[0]
    assert second.role == "system"
    assert [b.text for b in second.content] == ["Be brief."]  # type: ignore[union-attr]
    assert second.metadata == {}
    assert second.content[0] is not first.content[0]


def test_the_reply_in_progress_is_a_snapshot_with_the_hint() -> None:
    state = _state()
    last = request_messages(state, "Be brief.", "Answer now.")[-1]
    stored = state.context[-1]
    assert last is not stored and last.id == stored.id == "r1"
    assert [type(b) for b in last.content] == [TextBlock, HintBlock]
    assert len(stored.content) == 1  # the hint is the request's only
    assert "content" in last.model_fields_set
    last.content.append(TextBlock(text="x"))
    assert len(stored.content) == 1
