"""Agents share configuration, never progress: one toolkit and model, many states."""

from __future__ import annotations

import asyncio

from tether.agent import Agent
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


async def test_two_agents_on_one_toolkit_and_one_model_interleave_cleanly() -> None:
    turns = {"A": asyncio.Event(), "B": asyncio.Event()}

    @tool(is_concurrency_safe=True)
    async def hand_over(me: str, other: str) -> str:
        """Let the other agent run, then wait for it."""
        turns[other].set()
        await turns[me].wait()
        return f"{me} went on"

    def answer(request: ChatRequest) -> AssistantMsg:
        who = request.messages[1].get_text_content()
        assert who in ("A", "B")
        reply = request.messages[-1]
        if not reply.tool_calls:
            other = "B" if who == "A" else "A"
            return AssistantMsg("a", [call("hand_over", {"me": who, "other": other})])
        return AssistantMsg("a", f"{who}: {reply.tool_results[0].get_text()}")

    model = ScriptedChatModel([answer] * 4)
    toolkit = Toolkit(tools=[hand_over])
    a = Agent(name="a", system_prompt="p", model=model, toolkit=toolkit)
    b = Agent(name="b", system_prompt="p", model=model, toolkit=toolkit)
    ra, rb = await asyncio.wait_for(
        asyncio.gather(a.reply(UserMsg("u", "A")), b.reply(UserMsg("u", "B"))), timeout=10
    )
    assert (ra.get_text_content(), rb.get_text_content()) == ("A: A went on", "B: B went on")
    for agent, who in ((a, "A"), (b, "B")):
        texts = [m.get_text_content() for m in agent.state.context]
        assert texts[0] == who and all(t is None or who in t for t in texts)
    model.assert_complete()


async def test_switching_state_between_replies_keeps_a_paused_reply_apart() -> None:
    ran: list[str] = []

    @tool(requires_confirmation=True)
    def deploy(target: str) -> str:
        """Deploy."""
        ran.append(target)
        return f"deployed {target}"

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("deploy", {"target": "prod"}, id="d1")]),
            AssistantMsg("a", "hello from session 2"),
            AssistantMsg("a", "prod is out"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[deploy]))
    pause = [e async for e in agent.reply_stream(UserMsg("user", "deploy"))][-1]
    session1 = agent.state
    agent.state = type(session1)()
    assert (await agent.reply(UserMsg("user", "hi"))).get_text_content() == "hello from session 2"
    agent.state = session1
    final = await agent.reply(
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=pause.tool_calls[0])],
        )
    )
    assert final.get_text_content() == "prod is out" and ran == ["prod"]
    assert [m.get_text_content() for m in model.calls[2].messages[1:2]] == ["deploy"]
