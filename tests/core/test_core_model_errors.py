"""Model failures: retries, fallback, typed errors with the state as before the step."""

from __future__ import annotations

import asyncio

import pytest

from tether.agent import Agent, ModelConfig
from tether.errors import (
    ModelAuthenticationError,
    RateLimitError,
    ScriptExhaustedError,
    StreamInterruptedError,
)
from tether.event import EventType, ModelRetryEvent
from tether.message import AssistantMsg, ToolResultState, UserMsg
from tether.model import ScriptedChatModel, TextDelta
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call
NO_WAIT = dict(initial_retry_delay=0.0)


async def test_retryable_errors_are_retried_with_an_event() -> None:
    model = ScriptedChatModel(
        [TimeoutError("slow"), RateLimitError("429", retry_after=0.0), AssistantMsg("a", "finally")]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, model_config=ModelConfig(**NO_WAIT))
    events = [e async for e in agent.reply_stream(UserMsg("user", "x"))]
    retries = [e for e in events if isinstance(e, ModelRetryEvent)]
    assert [(r.attempt, r.next_model_name) for r in retries] == [(1, "scripted"), (2, "scripted")]
    assert "TimeoutError: slow" in retries[0].error
    assert events[-1].msg.get_text_content() == "finally"
    model.assert_complete()


async def test_retries_run_out_then_the_fallback_answers() -> None:
    main = ScriptedChatModel([ConnectionError("down")] * 3, name="main")
    fallback = ScriptedChatModel([AssistantMsg("a", "from fallback")], name="backup")
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=main,
        model_config=ModelConfig(max_retries=2, fallback_model=fallback, **NO_WAIT),
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "x"))]
    retries = [e for e in events if isinstance(e, ModelRetryEvent)]
    assert [r.next_model_name for r in retries] == ["main", "main", "backup"]
    end = [e for e in events if e.type is EventType.MODEL_CALL_END][0]
    assert end.model_name == "backup"
    assert events[-1].msg.get_text_content() == "from fallback"
    main.assert_complete()
    fallback.assert_complete()


async def test_non_retryable_error_leaves_state_as_before_the_step() -> None:
    @tool
    def ping() -> str:
        """Ping."""
        return "pong"

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("ping", id="c1")]),
            ModelAuthenticationError("bad key; set OPENAI_API_KEY"),
            AssistantMsg("a", "recovered"),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[ping]),
        model_config=ModelConfig(**NO_WAIT),
    )
    seen = []
    with pytest.raises(ModelAuthenticationError, match="OPENAI_API_KEY"):
        async for event in agent.reply_stream(UserMsg("user", "x")):
            seen.append(event)
            if event.type is EventType.TOOL_RESULT_END:
                snapshot = agent.state.model_dump_json()
    # nothing of the failed step was written: the state is the one after the tool ran
    assert agent.state.model_dump_json() == snapshot
    assert len(model.calls) == 2
    # `reply(None)` retries the step from there
    final = await agent.reply(None)
    assert final.get_text_content() == "recovered"
    assert [r.state for r in final.tool_results] == [ToolResultState.SUCCESS]


async def test_a_stream_broken_after_output_is_not_replayed() -> None:
    class Broken(ScriptedChatModel):
        async def stream(self, request):  # type: ignore[override]
            self.calls.append(request)
            yield TextDelta(text="partial ")
            raise ConnectionError("reset by peer")

    model = Broken([])
    agent = Agent(name="bot", system_prompt="p", model=model, model_config=ModelConfig(**NO_WAIT))
    with pytest.raises(StreamInterruptedError, match="not replayed"):
        await agent.reply(UserMsg("user", "x"))
    assert len(model.calls) == 1  # no silent retry
    assert agent.state.reply_msg().content == []  # the partial text was not committed


async def test_running_past_the_script_names_the_call() -> None:
    agent = Agent(name="bot", system_prompt="p", model=ScriptedChatModel([]))
    with pytest.raises(ScriptExhaustedError, match="call index 0"):
        await agent.reply(UserMsg("user", "x"))


async def test_assert_complete_fails_on_unused_responses() -> None:
    model = ScriptedChatModel([AssistantMsg("a", "one"), AssistantMsg("a", "two")])
    await Agent(name="bot", system_prompt="p", model=model).reply(UserMsg("user", "x"))
    with pytest.raises(AssertionError, match="1 of 2 responses were never used"):
        model.assert_complete()


async def test_cancelling_the_reply_interrupts_running_tools() -> None:
    started = asyncio.Event()

    @tool(is_concurrency_safe=True)
    async def hang(n: int) -> str:
        """Never returns."""
        started.set()
        await asyncio.Event().wait()
        return "never"

    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("hang", {"n": 1}, id="c1"), call("hang", {"n": 2}, id="c2")]),
            AssistantMsg("a", "after"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[hang]))
    task = asyncio.create_task(agent.reply(UserMsg("user", "x")))
    await started.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    results = agent.state.reply_msg().tool_results
    assert [(r.id, r.state) for r in results] == [
        ("c1", ToolResultState.INTERRUPTED),
        ("c2", ToolResultState.INTERRUPTED),
    ]
    assert all(c.state == "finished" for c in agent.state.reply_msg().tool_calls)
    # consistent: the reply can be continued, and the model sees both results
    final = await agent.reply(None)
    assert final.get_text_content() == "after"
    assert len(model.calls[1].messages[-1].tool_results) == 2


async def test_usage_before_a_failure_is_not_output_so_the_call_is_retried() -> None:
    from tether.message import ChatUsage
    from tether.model import UsageDelta

    class UsageThenDrop(ScriptedChatModel):
        async def stream(self, request):  # type: ignore[override]
            self.calls.append(request)
            if len(self.calls) == 1:
                yield UsageDelta(usage=ChatUsage(input_tokens=5))
                raise ConnectionError("dropped")
            yield TextDelta(text="second try")

    model = UsageThenDrop([])
    agent = Agent(name="bot", system_prompt="p", model=model, model_config=ModelConfig(**NO_WAIT))
    events = [e async for e in agent.reply_stream(UserMsg("user", "x"))]
    assert [e.attempt for e in events if isinstance(e, ModelRetryEvent)] == [1]
    assert events[-1].msg.get_text_content() == "second try"
