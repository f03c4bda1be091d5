"""Pausing for confirmation or external execution, and resuming (same process)."""

from __future__ import annotations

import json

import pytest

from tether.agent import Agent, ReActConfig
from tether.event import (
    ConfirmResult,
    EventType,
    ExternalExecutionResultEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import (
    AssistantMsg,
    TextBlock,
    ToolCallState,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call
T = EventType


def make_tools(ran: list[str]):
    @tool(requires_confirmation=True)
    def delete(path: str) -> str:
        """Delete a file."""
        ran.append(f"delete {path}")
        return f"deleted {path}"

    @tool(is_external_tool=True)
    def browser_click(selector: str) -> str:
        """Click in the user's browser (runs outside the agent)."""
        raise AssertionError("an external tool's body never runs")

    @tool(is_read_only=True, is_concurrency_safe=True)
    def look(path: str) -> str:
        """Read-only."""
        ran.append(f"look {path}")
        return f"contents of {path}"

    return Toolkit(tools=[delete, browser_click, look])


async def stream(agent: Agent, inputs) -> list:
    return [e async for e in agent.reply_stream(inputs)]


async def test_confirm_runs_the_call_and_remembers_rules() -> None:
    ran: list[str] = []
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("delete", {"path": "a.txt"}, id="c1")]),
            AssistantMsg("a", "deleted it"),
            AssistantMsg("a", [call("delete", {"path": "a.txt"}, id="c2")]),
            AssistantMsg("a", "again"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools(ran))
    events = await stream(agent, UserMsg("user", "delete a.txt"))
    pause = events[-1]
    assert isinstance(pause, RequireUserConfirmEvent)
    assert T.REPLY_END not in [e.type for e in events]
    assert [tc.id for tc in pause.tool_calls] == ["c1"]
    assert [str(r) for r in pause.tool_calls[0].suggested_rules] == ["delete"]
    assert ran == []
    assert agent.state.reply_msg().tool_calls[0].state is ToolCallState.ASKING

    confirm = UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[
            ConfirmResult(confirmed=True, tool_call=tc, rules=tc.suggested_rules)
            for tc in pause.tool_calls
        ],
    )
    resumed = await stream(agent, confirm)
    assert resumed[0].type is not T.REPLY_START and resumed[-1].type is T.REPLY_END
    assert ran == ["delete a.txt"]
    assert [str(r) for r in agent.state.permission_context.allow_rules] == ["delete"]

    # the remembered rule allows the next matching call without asking
    result = await agent.reply(UserMsg("user", "again"))
    assert result.get_text_content() == "again"
    assert ran == ["delete a.txt", "delete a.txt"]
    model.assert_complete()


async def test_rejection_gives_the_model_a_denied_result() -> None:
    ran: list[str] = []
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("delete", {"path": "a.txt"}, id="c1")]),
            AssistantMsg("a", "ok, I won't"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools(ran))
    pause = (await stream(agent, UserMsg("user", "x")))[-1]
    msg = await agent.reply(
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=False, tool_call=pause.tool_calls[0])],
        )
    )
    assert ran == [] and msg.get_text_content() == "ok, I won't"
    denied = model.calls[1].messages[-1].tool_results[0]
    assert denied.state is ToolResultState.DENIED and "rejected" in denied.output


async def test_rejection_reason_reaches_the_model() -> None:
    model = ScriptedChatModel(
        [AssistantMsg("a", [call("delete", {"path": "a.txt"}, id="c1")]), AssistantMsg("a", "ok")]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools([]))
    pause = (await stream(agent, UserMsg("user", "x")))[-1]
    answer = ConfirmResult(
        confirmed=False, tool_call=pause.tool_calls[0], reason="that file is my thesis"
    )
    await agent.reply(UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[answer]))
    denied = model.calls[1].messages[-1].tool_results[0]
    assert denied.state is ToolResultState.DENIED
    assert "rejected" in denied.output and "that file is my thesis" in denied.output


async def test_rejection_can_end_the_reply() -> None:
    model = ScriptedChatModel([AssistantMsg("a", [call("delete", {"path": "a"}, id="c1")])])
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=make_tools([]),
        react_config=ReActConfig(on_rejection="end_reply"),
    )
    pause = (await stream(agent, UserMsg("user", "x")))[-1]
    events = await stream(
        agent,
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=False, tool_call=pause.tool_calls[0])],
        ),
    )
    assert [e.type for e in events] == [T.TOOL_RESULT_END, T.REPLY_END]
    assert agent.state.reply is None
    model.assert_complete()


async def test_edited_input_is_what_runs() -> None:
    ran: list[str] = []
    model = ScriptedChatModel(
        [AssistantMsg("a", [call("delete", {"path": "all"}, id="c1")]), AssistantMsg("a", "done")]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools(ran))
    pause = (await stream(agent, UserMsg("user", "x")))[-1]
    edited = pause.tool_calls[0].model_copy(update={"input": json.dumps({"path": "one.txt"})})
    await agent.reply(
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=edited)],
        )
    )
    assert ran == ["delete one.txt"]


async def test_partial_confirmation_pauses_again_for_the_rest() -> None:
    ran: list[str] = []
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [call("delete", {"path": "1"}, id="c1"), call("delete", {"path": "2"}, id="c2")],
            ),
            AssistantMsg("a", "both handled"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools(ran))
    first = (await stream(agent, UserMsg("user", "x")))[-1]
    assert [tc.id for tc in first.tool_calls] == ["c1"]  # not concurrency-safe: one at a time
    second = (
        await stream(
            agent,
            UserConfirmResultEvent(
                reply_id=first.reply_id,
                confirm_results=[ConfirmResult(confirmed=True, tool_call=first.tool_calls[0])],
            ),
        )
    )[-1]
    assert isinstance(second, RequireUserConfirmEvent) and [tc.id for tc in second.tool_calls] == [
        "c2"
    ]
    assert ran == ["delete 1"]
    final = await agent.reply(
        UserConfirmResultEvent(
            reply_id=second.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=second.tool_calls[0])],
        )
    )
    assert ran == ["delete 1", "delete 2"] and final.get_text_content() == "both handled"


async def test_concurrent_batch_reports_asking_and_external_calls_in_one_event_each() -> None:
    ran: list[str] = []

    @tool(is_concurrency_safe=True, requires_confirmation=True)
    def risky(n: int) -> str:
        """Needs confirmation."""
        ran.append(f"risky {n}")
        return "ok"

    @tool(is_concurrency_safe=True, is_external_tool=True)
    def remote(n: int) -> str:
        """Runs outside."""
        raise AssertionError

    toolkit = Toolkit(tools=[risky, remote])
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [
                    call("risky", {"n": 1}, id="r1"),
                    call("risky", {"n": 2}, id="r2"),
                    call("remote", {"n": 3}, id="x1"),
                    call("remote", {"n": 4}, id="x2"),
                ],
            ),
            AssistantMsg("a", "all four done"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
    events = await stream(agent, UserMsg("user", "x"))
    confirm, external = events[-2], events[-1]
    assert isinstance(confirm, RequireUserConfirmEvent) and [c.id for c in confirm.tool_calls] == [
        "r1",
        "r2",
    ]
    assert isinstance(external, RequireExternalExecutionEvent) and [
        c.id for c in external.tool_calls
    ] == ["x1", "x2"]

    # confirm both: they run, and the reply pauses again for the external results
    again = await stream(
        agent,
        UserConfirmResultEvent(
            reply_id=confirm.reply_id,
            confirm_results=[
                ConfirmResult(confirmed=True, tool_call=c) for c in confirm.tool_calls
            ],
        ),
    )
    assert ran == ["risky 1", "risky 2"]
    assert isinstance(again[-1], RequireExternalExecutionEvent)
    results = [
        ToolResultBlock(id=c.id, name=c.name, output=[TextBlock(text=f"clicked {c.id}")])
        for c in external.tool_calls
    ]
    final = await agent.reply(
        ExternalExecutionResultEvent(reply_id=external.reply_id, execution_results=results)
    )
    assert final.get_text_content() == "all four done"
    assert [r.id for r in final.tool_results] == ["r1", "r2", "x1", "x2"]
    assert final.tool_results[2].get_text() == "clicked x1"


async def test_reply_returns_a_message_that_says_what_it_waits_for() -> None:
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a", [TextBlock(text="Let me delete it."), call("delete", {"path": "a"}, id="c1")]
            )
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools([]))
    msg = await agent.reply(UserMsg("user", "x"))
    assert msg.metadata["awaiting"] == ["user_confirmation"]
    assert msg.metadata["pause_events"][0]["type"] == "require_user_confirm"
    assert "paused" in msg.get_text_content() and "Let me delete it." in msg.get_text_content()
    # the notice is for the caller only, not part of the state
    assert "paused" not in agent.state.reply_msg().get_text_content()


async def test_interrupt_aborts_a_paused_reply() -> None:
    ran: list[str] = []
    model = ScriptedChatModel(
        [AssistantMsg("a", [call("delete", {"path": "a"}, id="c1")]), AssistantMsg("a", "next")]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools(ran))
    pause = (await stream(agent, UserMsg("user", "x")))[-1]
    events = await stream(agent, UserInterruptEvent(reply_id=pause.reply_id))
    assert [e.type for e in events] == [T.TOOL_RESULT_END, T.REPLY_END]
    assert events[0].tool_result.state is ToolResultState.INTERRUPTED
    assert agent.state.reply is None and ran == []
    # the session goes on normally
    assert (await agent.reply(UserMsg("user", "hi"))).get_text_content() == "next"


async def test_deny_rule_beats_a_remembered_allow() -> None:
    ran: list[str] = []
    state = AgentState(
        permission_context=PermissionContext(allow_rules=["delete"], deny_rules=["delete"])
    )
    model = ScriptedChatModel(
        [AssistantMsg("a", [call("delete", {"path": "a"}, id="c1")]), AssistantMsg("a", "denied")]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools(ran), state=state)
    await agent.reply(UserMsg("user", "x"))
    assert ran == []
    assert agent.state.context[-1].tool_results[0].state is ToolResultState.DENIED


@pytest.mark.parametrize("mode", ["dont_ask"])
async def test_dont_ask_mode_denies_instead_of_asking(mode: str) -> None:
    state = AgentState(permission_context=PermissionContext(mode=mode))
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("delete", {"path": "a"}, id="c1")]),
            AssistantMsg("a", "could not"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=make_tools([]), state=state)
    msg = await agent.reply(UserMsg("user", "x"))
    assert (
        msg.tool_results[0].state is ToolResultState.DENIED
        and "dont_ask" in msg.tool_results[0].output
    )
    assert PermissionRule.parse("delete") not in agent.state.permission_context.allow_rules
