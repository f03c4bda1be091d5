"""Loading damaged state data raises only `StateError`, before any recursion or model call."""

from __future__ import annotations

import json

import pytest

from tether.agent import Agent
from tether.errors import StateError, StateVersionError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import AssistantMsg, ToolCallBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState, ReplyCursor


@pytest.mark.parametrize("depth", [100_000, 5_000])
def test_deeply_nested_json_is_a_state_error_not_a_recursion_error(depth: int) -> None:
    text = '{"tool_state": {"x": {"a": ' + "[" * depth + "]" * depth + "}}}"
    with pytest.raises(StateError, match="nested too deeply"):
        AgentState.model_validate_json(text)


def test_nesting_past_the_bound_in_a_free_form_value_is_refused() -> None:
    deep: list[object] = []
    for _ in range(300):
        deep = [deep]
    with pytest.raises(StateError, match="deeper than"):
        AgentState.model_validate({"tool_state": {"x": {"a": deep}}})
    text = json.dumps({"context": [{"name": "u", "role": "user", "metadata": {"k": deep}}]})
    with pytest.raises(StateError, match="deeper than"):
        AgentState.model_validate_json(text)


def test_moderate_nesting_still_loads() -> None:
    value: list[object] = []
    for _ in range(50):
        value = [value]
    state = AgentState.model_validate({"tool_state": {"x": {"a": value}}})
    assert AgentState.model_validate_json(state.model_dump_json()) == state


@pytest.mark.parametrize(
    "text",
    ['{"context": 5}', "not json", "[1, 2]", '{"reply": {"iteration": "x"}}', '{"bogus": 1}'],
)
def test_bad_data_is_a_state_error(text: str) -> None:
    with pytest.raises(StateError):
        AgentState.model_validate_json(text)


def test_an_unknown_version_is_a_state_error_too() -> None:
    with pytest.raises(StateVersionError) as caught:
        AgentState.model_validate_json('{"schema_version": 99}')
    assert isinstance(caught.value, StateError)


def _damaged() -> AgentState:
    state = AgentState()
    state.add_message(UserMsg("user", "hi"))
    state.reply = ReplyCursor(reply_id="gone")
    return AgentState.model_validate_json(state.model_dump_json())  # loads: data is well formed


async def test_a_cursor_pointing_at_no_message_is_refused_before_any_model_call() -> None:
    model = ScriptedChatModel([])
    agent = Agent("a", "p", model, state=_damaged())
    before = agent.state.model_dump_json()
    with pytest.raises(StateError, match="gone"):
        await agent.reply(None)
    call = ToolCallBlock(id="c", name="t")
    event = UserConfirmResultEvent(
        reply_id="gone", confirm_results=[ConfirmResult(confirmed=True, tool_call=call)]
    )
    with pytest.raises(StateError, match="gone"):
        await agent.reply(event)
    assert model.calls == [] and agent.state.model_dump_json() == before


async def test_a_new_message_closes_the_damaged_cursor_and_goes_on() -> None:
    agent = Agent("a", "p", ScriptedChatModel([AssistantMsg("a", "fine")]), state=_damaged())
    msg = await agent.reply(UserMsg("user", "again"))
    assert msg.get_text_content() == "fine" and agent.state.reply is None
