"""What the model sends that the loop must cope with, and how its failures leave the state."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from tether.agent import Agent, ModelConfig, ReActConfig
from tether.errors import ModelAuthenticationError, StreamInterruptedError, StructuredOutputError
from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.message import AssistantMsg, ToolCallState, UserMsg
from tether.model import ScriptedChatModel, TextDelta
from tether.state import AgentState
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call
NO_WAIT = dict(initial_retry_delay=0.0)


@tool(is_read_only=True, is_concurrency_safe=True)
def look(n: int) -> str:
    """Look."""
    return f"seen {n}"


@pytest.mark.parametrize("same_step", [True, False])
async def test_a_reused_call_id_gets_a_fresh_one(same_step: bool) -> None:
    first = [call("look", {"n": 1}, id="call_0")]
    second = [call("look", {"n": 2}, id="call_0")]
    steps = [first + second] if same_step else [first, second]
    model = ScriptedChatModel([*(AssistantMsg("a", s) for s in steps), AssistantMsg("a", "done")])
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[look]))
    events = [e async for e in agent.reply_stream(UserMsg("user", "x"))]
    final = events[-1].msg
    ids = [c.id for c in final.tool_calls]
    assert ids[0] == "call_0" and len(set(ids)) == 2
    assert [(r.id, r.get_text()) for r in final.tool_results] == [
        (ids[0], "seen 1"),
        (ids[1], "seen 2"),
    ]
    ends = [e.tool_call.id for e in events if e.type == "tool_call_end"]
    assert ends == ids  # the events carry the ids the state keeps
    model.assert_complete()


async def test_structured_output_is_still_possible_at_the_iteration_limit() -> None:
    class Answer(BaseModel):
        city: str

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("look", {"n": 1})]),
            AssistantMsg(
                "a", [call("look", {"n": 2}), call("generate_response", {"city": "Oslo"})]
            ),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[look]),
        react_config=ReActConfig(max_iters=1),
    )
    msg = await agent.reply(UserMsg("user", "x"), structured_schema=Answer)
    assert msg.metadata["structured_output"] == {"city": "Oslo"}
    last = model.calls[-1]
    assert [t["name"] for t in last.tools] == ["generate_response"]
    assert last.tool_choice.name == "generate_response"
    assert [c.name for c in msg.tool_calls] == ["look", "generate_response"]  # look 2 dropped
    model.assert_complete()


async def test_structured_output_with_a_model_that_never_calls_the_tool_raises() -> None:
    class Answer(BaseModel):
        city: str

    model = ScriptedChatModel([AssistantMsg("a", "Oslo"), AssistantMsg("a", "Oslo, I said")])
    agent = Agent(name="bot", system_prompt="p", model=model)
    with pytest.raises(StructuredOutputError, match="generate_response") as caught:
        await agent.reply(UserMsg("user", "x"), structured_schema=Answer)
    assert caught.value.msg.get_text_content() == "Oslo\nOslo, I said"
    assert agent.state.reply is None  # the reply is closed, its text kept
    assert agent.state.context[-1].get_text_content() == "Oslo\nOslo, I said"
    model.assert_complete()


async def test_structured_output_missing_can_return_the_text_instead() -> None:
    class Answer(BaseModel):
        city: str

    model = ScriptedChatModel([AssistantMsg("a", "Oslo"), AssistantMsg("a", "Oslo, I said")])
    config = ReActConfig(on_missing_structured_output="return_text")
    agent = Agent(name="bot", system_prompt="p", model=model, react_config=config)
    msg = await agent.reply(UserMsg("user", "x"), structured_schema=Answer)
    assert (
        "structured_output" not in msg.metadata and msg.get_text_content() == "Oslo\nOslo, I said"
    )
    assert msg.structured_output is None and agent.state.reply is None
    model.assert_complete()


async def test_max_iters_counts_across_a_pause_and_a_fresh_process() -> None:
    @tool(requires_confirmation=True)
    def deploy(n: int) -> str:
        """Deploy."""
        return f"deployed {n}"

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("deploy", {"n": 1}, id="d1")]), AssistantMsg("a", "final")]
    )
    config = ReActConfig(max_iters=1)
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[deploy]),
        react_config=config,
    )
    pause = [e async for e in agent.reply_stream(UserMsg("user", "x"))][-1]
    resumed = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[deploy]),
        react_config=config,
        state=AgentState.model_validate_json(agent.state.model_dump_json()),
    )
    final = await resumed.reply(
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=pause.tool_calls[0])],
        )
    )
    assert final.get_text_content() == "final"
    assert model.calls[1].tool_choice == "none" and model.calls[1].tools == []
    model.assert_complete()


async def test_the_fallback_failing_too_leaves_the_state_as_before_the_step() -> None:
    main = ScriptedChatModel(
        [AssistantMsg("a", [call("look", {"n": 1}, id="l1")]), ConnectionError("down")],
        name="main",
    )
    fallback = ScriptedChatModel([ModelAuthenticationError("bad backup key")], name="backup")
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=main,
        toolkit=Toolkit(tools=[look]),
        model_config=ModelConfig(max_retries=0, fallback_model=fallback, **NO_WAIT),
    )
    snapshot = None
    with pytest.raises(ModelAuthenticationError, match="bad backup key"):
        async for event in agent.reply_stream(UserMsg("user", "x")):
            if event.type == "tool_result_end":
                snapshot = agent.state.model_dump_json()
    assert agent.state.model_dump_json() == snapshot
    retry = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel([AssistantMsg("a", "recovered")]),
        toolkit=Toolkit(tools=[look]),
        state=agent.state,
    )
    assert (await retry.reply(None)).get_text_content() == "recovered"


async def test_a_stream_broken_after_output_changes_nothing() -> None:
    class Broken(ScriptedChatModel):
        async def stream(self, request):  # type: ignore[no-untyped-def,override]
            self.calls.append(request)
            yield TextDelta(text="partial ")
            raise ConnectionError("reset by peer")

    fallback = ScriptedChatModel([AssistantMsg("a", "never asked")], name="backup")
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=Broken([]),
        model_config=ModelConfig(fallback_model=fallback, **NO_WAIT),
    )
    snapshot = None
    with pytest.raises(StreamInterruptedError, match=r"reply\(None\)"):
        async for event in agent.reply_stream(UserMsg("user", "x")):
            if event.type == "reply_start":
                snapshot = agent.state.model_dump_json()
    assert agent.state.model_dump_json() == snapshot
    assert fallback.calls == []  # half an answer is not replayed elsewhere either
    assert all(c.state is ToolCallState.FINISHED for c in agent.state.reply_msg().tool_calls)
