"""A model call that is retried then falls back, and a compression, as spans and metrics."""

from __future__ import annotations

from opentelemetry import trace
from opentelemetry.trace import StatusCode

from tether.agent import Agent, ModelConfig
from tether.context import ContextConfig
from tether.errors import ModelRetryableError
from tether.message import AssistantMsg, ChatUsage, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ScriptedChatModel
from tether.state import AgentState


async def test_retry_then_fallback_is_one_chat_span_with_its_story(telemetry) -> None:
    main = ScriptedChatModel([TimeoutError("slow"), ModelRetryableError("overloaded")], name="main")
    backup = ScriptedChatModel([AssistantMsg("a", "from the backup")], name="backup")
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=main,
        model_config=ModelConfig(max_retries=1, initial_retry_delay=0, fallback_model=backup),
        middlewares=[telemetry.middleware()],
    )
    msg = await agent.reply(UserMsg("user", "hi"))
    assert msg.get_text_content() == "from the backup"
    main.assert_complete()
    backup.assert_complete()
    chat = telemetry.one("chat main")
    root = telemetry.one("invoke_agent bot")
    assert chat.parent.span_id == root.context.span_id
    assert chat.attributes["gen_ai.request.model"] == "main"
    assert chat.attributes["gen_ai.response.model"] == "backup"
    assert chat.attributes["tether.retry.attempts"] == 2
    assert chat.attributes["tether.fallback.model"] == "backup"
    assert chat.status.status_code is StatusCode.UNSET  # it recovered
    assert [
        (e.name, e.attributes["error.type"], e.attributes["tether.retry.next_model"])
        for e in chat.events
    ] == [
        ("tether.model.retry", "TimeoutError", "main"),
        ("tether.model.fallback", "tether.errors.ModelRetryableError", "backup"),
    ]
    retries = telemetry.points("tether.model.retries")
    assert sorted((a["tether.retry.fallback"], p.value) for a, p in retries) == [
        (False, 1),
        (True, 1),
    ]
    durations = telemetry.points("gen_ai.client.operation.duration")
    assert [(a["gen_ai.response.model"], p.count) for a, p in durations] == [("backup", 1)]


async def test_a_failed_model_call_records_its_error_type(telemetry) -> None:
    model = ScriptedChatModel([ModelRetryableError("down")], name="main")
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        model_config=ModelConfig(max_retries=0),
        middlewares=[telemetry.middleware()],
    )
    try:
        await agent.reply(UserMsg("user", "hi"))
    except ModelRetryableError:
        pass
    else:
        raise AssertionError("the model error should surface")
    chat, root = telemetry.one("chat main"), telemetry.one("invoke_agent bot")
    for span in (chat, root):
        assert span.attributes["error.type"] == "tether.errors.ModelRetryableError"
        assert span.status.status_code is StatusCode.ERROR
    assert root.attributes["tether.reply.outcome"] == "error"
    durations = telemetry.points("gen_ai.client.operation.duration")
    assert [a["error.type"] for a, _ in durations] == ["tether.errors.ModelRetryableError"]


async def test_a_failing_model_leaves_the_callers_context_as_it_was(telemetry) -> None:
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel([ModelRetryableError("down")], name="main"),
        model_config=ModelConfig(max_retries=0),
        middlewares=[telemetry.middleware()],
    )
    seen: list[trace.Span] = []

    class Watch(MiddlewareBase):
        async def on_reasoning(self, call, call_next):  # inside the reply, around the chat
            try:
                async for event in call_next(call):
                    yield event
            except ModelRetryableError:
                seen.append(trace.get_current_span())
                raise

    agent.middlewares = (*agent.middlewares, Watch())
    tracer = telemetry.tracer_provider.get_tracer("test")
    with tracer.start_as_current_span("caller") as caller:
        stream = agent.reply_stream(UserMsg("user", "hi"))
        try:
            async for _event in stream:
                assert trace.get_current_span() is caller
        except ModelRetryableError:
            pass
        else:
            raise AssertionError("the model error should surface")
        # the chat and reply spans were current while the model ran, and are no longer
        assert trace.get_current_span() is caller
    assert trace.get_current_span() is trace.INVALID_SPAN
    chat, root = telemetry.one("chat main"), telemetry.one("invoke_agent bot")
    assert chat.parent.span_id == root.context.span_id
    assert root.parent.span_id == caller.get_span_context().span_id
    # where the error passed the step around the chat, the chat span was no longer current
    assert [s.get_span_context().span_id for s in seen] == [root.context.span_id]


def long_history() -> AgentState:
    state = AgentState()
    for i in range(30):
        state.add_message(UserMsg("user", f"question {i}: " + "words " * 60))
        state.add_message(AssistantMsg("bot", f"answer {i}: " + "more words " * 40))
    return state


async def test_a_compression_gets_its_span_with_tokens_before_and_after(telemetry) -> None:
    model = ScriptedChatModel(
        [AssistantMsg("s", "## Goal\\nanswer questions"), AssistantMsg("a", "done")],
        context_length=8_000,
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        state=long_history(),
        context_config=ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1),
        middlewares=[telemetry.middleware()],
    )
    before = agent.state.estimated_tokens
    assert before > 4_000
    await agent.reply(UserMsg("user", "and now?"))
    model.assert_complete()
    root = telemetry.one("invoke_agent bot")
    compressed = telemetry.one("compress_context")
    assert compressed.parent.span_id == root.context.span_id
    assert compressed.attributes["tether.compression.before_tokens"] >= before
    after = compressed.attributes["tether.compression.after_tokens"]
    assert 0 < after < compressed.attributes["tether.compression.before_tokens"]
    assert compressed.attributes["tether.compression.summarised"] is True
    assert compressed.attributes["tether.compression.messages"] > 0
    # the summary call is not a `chat` span of the reply (it bypasses on_model_call)
    assert len(telemetry.named("chat scripted")) == 1
    assert compressed.end_time <= telemetry.one("chat scripted").start_time


async def test_finish_reasons_are_tethers_words_with_the_providers_kept(telemetry) -> None:
    from tether.model import StopDelta, TextDelta, UsageDelta

    model = ScriptedChatModel(
        [
            [
                TextDelta("cut sho"),
                UsageDelta(ChatUsage(input_tokens=5, output_tokens=2)),
                StopDelta("length", raw="max_tokens"),
            ]
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, middlewares=[telemetry.middleware()])
    await agent.reply(UserMsg("user", "hi"))
    chat = telemetry.one("chat scripted")
    assert list(chat.attributes["gen_ai.response.finish_reasons"]) == ["length"]
    assert chat.attributes["tether.response.finish_reason.raw"] == "max_tokens"
