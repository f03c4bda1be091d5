"""Contents only when opted in; an API key in no span and no log record, even when echoed."""

from __future__ import annotations

import logging

import pytest
from fake_openai import FakeOpenAI, auth_error, completion

from tether._log import configure_logging, fields_of
from tether.agent import Agent, ModelConfig
from tether.credential import OpenAICredential
from tether.errors import ModelAuthenticationError
from tether.message import AssistantMsg, UserMsg
from tether.model import OpenAIChatModel, ScriptedChatModel
from tether.tool import Toolkit, tool

SENTINEL = "sk-tether-sentinel-0123456789abcdefXYZ"
CONTENT_KEYS = {
    "gen_ai.input.messages",
    "gen_ai.output.messages",
    "gen_ai.system_instructions",
    "gen_ai.tool.call.arguments",
    "gen_ai.tool.call.result",
}


@tool(is_read_only=True, is_concurrency_safe=True)
def lookup(term: str) -> str:
    """Look a term up."""
    return f"the meaning of {term}"


def agent_with(telemetry, **options) -> tuple[Agent, ScriptedChatModel]:
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [ScriptedChatModel.tool_call("lookup", {"term": "secret plan"})]),
            AssistantMsg("a", "the plan is ready"),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="You keep plans.",
        model=model,
        toolkit=Toolkit(tools=[lookup]),
        middlewares=[telemetry.middleware(**options)],
    )
    return agent, model


def every_text(spans) -> str:
    parts = []
    for span in spans:
        parts += [span.name, repr(dict(span.attributes)), span.status.description or ""]
        parts += [repr(dict(e.attributes)) for e in span.events]
        parts += [repr(dict(link.attributes or {})) for link in span.links]
    return "\n".join(parts)


async def test_no_content_attributes_unless_opted_in(telemetry, monkeypatch) -> None:
    monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    agent, _ = agent_with(telemetry)
    await agent.reply(UserMsg("user", "make a secret plan"))
    spans = telemetry.spans()
    assert len(spans) == 4
    assert not any(CONTENT_KEYS & set(s.attributes) for s in spans)
    assert "secret plan" not in every_text(spans)


@pytest.mark.parametrize("how", ["argument", "environment"])
async def test_contents_when_opted_in(telemetry, monkeypatch, how) -> None:
    if how == "environment":
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
        agent, _ = agent_with(telemetry)
    else:
        monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
        agent, _ = agent_with(telemetry, capture_content=True)
    await agent.reply(UserMsg("user", "make a secret plan"))
    first, second = sorted(telemetry.named("chat scripted"), key=lambda s: s.start_time)
    assert "make a secret plan" in first.attributes["gen_ai.input.messages"]
    assert "You keep plans." in first.attributes["gen_ai.system_instructions"]
    assert '"name": "lookup"' in first.attributes["gen_ai.output.messages"]
    assert "the plan is ready" in second.attributes["gen_ai.output.messages"]
    tool_span = telemetry.one("execute_tool lookup")
    assert "secret plan" in tool_span.attributes["gen_ai.tool.call.arguments"]
    assert tool_span.attributes["gen_ai.tool.call.result"] == "the meaning of secret plan"


async def test_explicit_false_beats_the_environment(telemetry, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "true")
    agent, _ = agent_with(telemetry, capture_content=False)
    await agent.reply(UserMsg("user", "make a secret plan"))
    assert not any(CONTENT_KEYS & set(s.attributes) for s in telemetry.spans())


async def test_a_sentinel_key_is_in_no_span_and_no_log_record(telemetry, caplog) -> None:
    """Over real HTTP: the server echoes the key in an answer and in its 401 error."""
    caplog.set_level(logging.DEBUG, logger="tether")
    configure_logging("debug")
    replies = [
        (200, completion(f"you pasted {SENTINEL}, keep it safe")),
        (401, auth_error(f"Incorrect API key provided: {SENTINEL}.")),
    ]
    try:
        async with FakeOpenAI(replies) as server:
            model = OpenAIChatModel(
                OpenAICredential(api_key=SENTINEL), "gpt-4o", base_url=server.url, stream=False
            )
            agent = Agent(
                name="bot",
                system_prompt="p",
                model=model,
                model_config=ModelConfig(max_retries=0),
                middlewares=[telemetry.middleware(capture_content=True)],
            )
            first = await agent.reply(UserMsg("user", f"my key is {SENTINEL}"))
            assert SENTINEL in (first.get_text_content() or "")  # the agent itself is untouched
            with pytest.raises(ModelAuthenticationError):
                await agent.reply(UserMsg("user", "again"))
            assert server.headers[0]["authorization"] == f"Bearer {SENTINEL}"  # it was really sent
    finally:
        configure_logging("off")
        for handler in [
            h for h in logging.getLogger("tether").handlers if getattr(h, "tether_handler", False)
        ]:
            logging.getLogger("tether").removeHandler(handler)
    spans = telemetry.spans()
    assert len(telemetry.named("chat gpt-4o")) == 2
    failed = [
        s
        for s in spans
        if s.attributes.get("error.type") == "tether.errors.ModelAuthenticationError"
    ]
    assert len(failed) == 2  # the chat span and the reply span
    text = every_text(spans)
    assert "Incorrect API key provided" in text and "***" in text
    assert SENTINEL not in text
    assert caplog.records, "the tether loggers wrote nothing"
    for rec in caplog.records:
        assert SENTINEL not in rec.getMessage()
        assert SENTINEL not in repr(fields_of(rec))
    chat = min(telemetry.named("chat gpt-4o"), key=lambda s: s.start_time)
    assert chat.attributes["gen_ai.provider.name"] == "openai"
    assert chat.attributes["server.address"] == "127.0.0.1"
    assert chat.attributes["tether.usage.cost"] == pytest.approx((11 * 2.5 + 7 * 10.0) / 1e6)
