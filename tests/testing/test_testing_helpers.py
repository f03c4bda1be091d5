"""The helpers `tether.testing` gives users' tests (and tether's own)."""

from __future__ import annotations

import pytest

from tether.errors import ConfigError
from tether.event import ToolResultEndEvent
from tether.message import AssistantMsg, ToolResultBlock, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.testing import event_types, reply_events, scripted_agent, tool_results
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


@tool
def ping(n: int) -> str:
    """Ping."""
    return f"pong {n}"


async def test_a_scripted_agent_plays_its_steps_with_its_tools() -> None:
    agent = scripted_agent(
        AssistantMsg("a", [call("ping", {"n": 1}, id="c1"), call("ping", {"n": 2}, id="c2")]),
        AssistantMsg("a", "done"),
        tools=[ping],
    )
    events = await reply_events(agent, "go")
    assert event_types(events)[0] == "reply_start" and event_types(events)[-1] == "reply_end"
    assert [(r.id, r.get_text()) for r in tool_results(events)] == [
        ("c1", "pong 1"),
        ("c2", "pong 2"),
    ]
    assert all(r.state is ToolResultState.SUCCESS for r in tool_results(events))
    assert isinstance(agent.model, ScriptedChatModel)
    agent.model.assert_complete()
    # a plain string is the user's message
    first = agent.model.calls[0].messages[1]
    assert first.role == "user" and first.get_text_content() == "go"


async def test_a_given_model_toolkit_and_state_are_used_as_they_are() -> None:
    model = ScriptedChatModel([AssistantMsg("a", "hello")], context_length=9_000)
    toolkit = Toolkit(tools=[ping])
    state = AgentState()
    agent = scripted_agent(model=model, toolkit=toolkit, state=state, name="n", system_prompt="s")
    assert (agent.model, agent.toolkit, agent.state) == (model, toolkit, state)
    assert (agent.name, agent.system_prompt) == ("n", "s")
    msg = (await reply_events(agent, UserMsg("user", "hi")))[-1].msg
    assert msg.get_text_content() == "hello"
    assert model.calls[0].messages[0].get_text_content().startswith("s")
    model.assert_complete()


def test_steps_come_from_one_place_and_tools_from_one_place() -> None:
    with pytest.raises(ConfigError, match="`steps` or `model=`"):
        scripted_agent(AssistantMsg("a", "x"), model=ScriptedChatModel([]))
    with pytest.raises(ConfigError, match="`tools=` or `toolkit=`"):
        scripted_agent(tools=[ping], toolkit=Toolkit())


def test_context_length_reaches_the_scripted_model() -> None:
    assert scripted_agent(context_length=6_000).model.context_length == 6_000


def test_tool_results_keeps_the_order_and_skips_other_events() -> None:
    agent_events = [
        ToolResultEndEvent(reply_id="r", block_id="b", tool_result=_result("b")),
        ToolResultEndEvent(reply_id="r", block_id="a", tool_result=_result("a")),
    ]
    assert [r.id for r in tool_results(agent_events)] == ["b", "a"]
    assert tool_results([]) == []


def _result(call_id: str) -> ToolResultBlock:
    return ToolResultBlock(id=call_id, name="ping", output="x")
