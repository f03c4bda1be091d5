"""Trust boundaries: what goes in or out of the agent is a copy; events rebuild the reply."""

from __future__ import annotations

from tether.agent import Agent
from tether.event import (
    ConfirmResult,
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    ToolCallEndEvent,
    ToolResultEndEvent,
    UserConfirmResultEvent,
    event_adapter,
    fold_event,
)
from tether.message import (
    AssistantMsg,
    Msg,
    TextBlock,
    ThinkingBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


def make_toolkit(ran: list[str]) -> Toolkit:
    @tool(is_read_only=True, is_concurrency_safe=True)
    def look(n: int) -> str:
        """Look."""
        ran.append(f"look {n}")
        return f"seen {n}"

    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        """Delete."""
        ran.append(f"delete {path}")
        return f"deleted {path}"

    @tool(is_external_tool=True)
    def click(selector: str) -> str:
        """Click in the user's browser."""
        raise AssertionError("runs outside")

    return Toolkit(tools=[look, delete, click])


def script() -> list:
    return [
        AssistantMsg(
            "a",
            [
                ThinkingBlock(thinking="plan", signature="sig"),
                TextBlock(text="looking first"),
                call("look", {"n": 1}, id="l1"),
                call("look", {"n": 2}, id="l2"),
                call("delete", {"path": "all"}, id="d1"),
            ],
        ),
        AssistantMsg("a", [call("click", {"selector": "#ok"}, id="k1")]),
        AssistantMsg("a", "all done"),
    ]


async def run_paused_and_resumed(agent: Agent) -> list:
    """Start, confirm d1 with an edited input, give k1's external result; all events."""
    events = [e async for e in agent.reply_stream(UserMsg("user", "go"))]
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    edited = pause.tool_calls[0].model_copy(update={"input": '{"path": "one.txt"}'})
    confirm = UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=edited)],
    )
    # the resume happens in a "fresh process": the state goes through JSON
    agent.state = AgentState.model_validate_json(agent.state.model_dump_json())
    events += [e async for e in agent.reply_stream(confirm)]
    pause = events[-1]
    assert isinstance(pause, RequireExternalExecutionEvent)
    result = ToolResultBlock(id="k1", name="click", output=[TextBlock(text="clicked")])
    external = ExternalExecutionResultEvent(reply_id=pause.reply_id, execution_results=[result])
    events += [e async for e in agent.reply_stream(external)]
    return events


async def test_events_of_a_paused_and_resumed_reply_round_trip_and_fold_into_it() -> None:
    ran: list[str] = []
    agent = Agent(
        name="bot", system_prompt="p", model=ScriptedChatModel(script()), toolkit=make_toolkit(ran)
    )
    events = await run_paused_and_resumed(agent)
    assert ran == ["look 1", "look 2", "delete one.txt"]
    folded = Msg(name="bot", role="assistant")
    for event in events:
        again = event_adapter.validate_json(event_adapter.dump_json(event))
        assert again == event and type(again) is type(event)
        fold_event(folded, again)
    final = events[-1]
    assert isinstance(final, ReplyEndEvent)
    assert folded.model_dump(exclude={"created_at"}) == final.msg.model_dump(exclude={"created_at"})
    assert final.msg.tool_calls[2].input == '{"path": "one.txt"}'


async def test_what_the_agent_hands_out_is_a_copy() -> None:
    agent = Agent(
        name="bot", system_prompt="p", model=ScriptedChatModel(script()), toolkit=make_toolkit([])
    )
    paused = await agent.reply(UserMsg("user", "go"))
    saved = agent.state.model_dump_json()
    paused.content[0].thinking = "changed"  # type: ignore[union-attr]
    paused.tool_calls[2].suggested_rules.clear()
    paused.tool_results[0].output = "changed"
    assert agent.state.model_dump_json() == saved

    agent = Agent(
        name="bot", system_prompt="p", model=ScriptedChatModel(script()), toolkit=make_toolkit([])
    )
    events = await run_paused_and_resumed(agent)
    saved = agent.state.model_dump_json()
    for event in events:
        if isinstance(event, ToolResultEndEvent):
            event.tool_result.output = "changed"
        elif isinstance(event, ToolCallEndEvent):
            event.tool_call.input = "changed"
        elif isinstance(event, RequireUserConfirmEvent | RequireExternalExecutionEvent):
            event.tool_calls[0].suggested_rules.clear()
        elif isinstance(event, ReplyEndEvent):
            event.msg.content.clear()
    assert agent.state.model_dump_json() == saved


async def test_what_the_caller_hands_in_is_copied() -> None:
    agent = Agent(
        name="bot", system_prompt="p", model=ScriptedChatModel(script()), toolkit=make_toolkit([])
    )
    user = UserMsg("user", [TextBlock(text="go")])
    await agent.reply(user)
    pause = agent.state.reply_msg()
    d1 = pause.tool_calls[2].model_copy(deep=True)
    confirm = UserConfirmResultEvent(
        reply_id=pause.id, confirm_results=[ConfirmResult(confirmed=True, tool_call=d1)]
    )
    await agent.reply(confirm)
    result = ToolResultBlock(id="k1", name="click", output=[TextBlock(text="clicked")])
    await agent.reply(ExternalExecutionResultEvent(reply_id=pause.id, execution_results=[result]))
    saved = agent.state.model_dump_json()
    user.content[0].text = "changed"  # type: ignore[union-attr]
    result.output[0].text = "changed"  # type: ignore[union-attr,index]
    d1.suggested_rules.clear()
    assert agent.state.model_dump_json() == saved
    assert all(c.state is ToolCallState.FINISHED for c in agent.state.context[-1].tool_calls)
