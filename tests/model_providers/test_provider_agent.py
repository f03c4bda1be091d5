"""The same agent conversation on all five providers, swapping only the model object."""

import json

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, make_model, stream_reply
from pydantic import BaseModel

from tether.agent import Agent, ModelConfig
from tether.event import EventType
from tether.message import TextBlock, ToolCallBlock, ToolResultBlock, UserMsg
from tether.tool import Toolkit


def get_weather(city: str) -> str:
    """The weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny and 21°C in {city}"


def tool_result_sent(provider: str, body: dict) -> str:
    """The tool result text as the provider's second request carried it."""
    if provider == "openai":
        return next(m["content"] for m in body["messages"] if m["role"] == "tool")
    if provider == "anthropic":
        return body["messages"][-1]["content"][0]["content"]
    if provider == "gemini":
        return body["contents"][-1]["parts"][0]["functionResponse"]["response"]["output"]
    if provider == "dashscope":
        return next(m["content"] for m in body["input"]["messages"] if m["role"] == "tool")
    return next(m["content"] for m in body["messages"] if m["role"] == "tool")


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_same_conversation_on_every_provider(server: ReplayServer, provider: str) -> None:
    server.add(
        stream_reply(
            provider,
            [
                ("text", "Let me check."),
                ("call", 0, "call_w", "get_weather"),
                ("args", 0, '{"city": '),
                ("args", 0, '"Paris"}'),
                ("usage", 50, 10),
            ],
        ),
        stream_reply(provider, [("text", "It is sunny"), ("text", " in Paris."), ("usage", 80, 6)]),
    )
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=make_model(provider, server.url),  # the only line that changes per provider
        toolkit=Toolkit(tools=[get_weather]),
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "What is the weather in Paris?"))]
    server.assert_done()
    types = [e.type for e in events]
    assert types[0] == EventType.REPLY_START and types[-1] == EventType.REPLY_END
    assert types.count(EventType.MODEL_CALL_START) == 2
    assert EventType.TOOL_CALL_START in types and EventType.TOOL_RESULT_END in types
    final = events[-1].msg
    assert final.get_text_content("") == "Let me check.It is sunny in Paris."
    (call,) = final.get_content_blocks(ToolCallBlock)
    assert call.name == "get_weather" and json.loads(call.input) == {"city": "Paris"}
    (result,) = final.get_content_blocks(ToolResultBlock)
    assert result.id == call.id and result.get_text() == "Sunny and 21°C in Paris"
    assert [type(b) for b in final.content] == [
        TextBlock,
        ToolCallBlock,
        ToolResultBlock,
        TextBlock,
    ]
    assert tool_result_sent(provider, server.requests[1].json()) == "Sunny and 21°C in Paris"
    state_json = agent.state.model_dump_json()
    assert "sk-test" not in state_json and "sk-ant" not in state_json and "g-key" not in state_json
    assert "sk-ds" not in state_json
    assert all("sk-" not in e.model_dump_json() for e in events)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_agent_emits_one_model_retry_event_on_429(
    server: ReplayServer, provider: str
) -> None:
    from provider_wire import error_reply

    server.add(
        error_reply(provider, 429, "slow down", headers={"retry-after": "0"}),
        stream_reply(provider, [("text", "Hi!")]),
    )
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=make_model(provider, server.url),
        model_config=ModelConfig(initial_retry_delay=0),
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "hello"))]
    server.assert_done()
    assert [e.type for e in events].count(EventType.MODEL_RETRY) == 1
    assert events[-1].msg.get_text_content() == "Hi!"


FALLBACK = {"openai": "ollama", "anthropic": "openai", "gemini": "anthropic"}
FALLBACK |= {"dashscope": "gemini", "ollama": "dashscope"}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_agent_switches_to_the_fallback_model_when_a_provider_keeps_failing(
    server: ReplayServer, provider: str
) -> None:
    from provider_wire import error_reply

    server.add(*(error_reply(provider, 503, "overloaded") for _ in range(3)))
    server.add(stream_reply(FALLBACK[provider], [("text", "Hi from the fallback!")]))
    primary = make_model(provider, server.url)
    fallback = make_model(FALLBACK[provider], server.url)
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=primary,
        model_config=ModelConfig(max_retries=2, initial_retry_delay=0, fallback_model=fallback),
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "hello"))]
    server.assert_done()  # three failed calls to the primary, then one to the fallback
    retries = [e for e in events if e.type == EventType.MODEL_RETRY]
    assert [e.next_model_name for e in retries] == [primary.model_name] * 2 + [fallback.model_name]
    assert all("503" in e.error or "overloaded" in e.error for e in retries)
    (end,) = [e for e in events if e.type == EventType.MODEL_CALL_END]
    assert end.model_name == fallback.model_name
    assert events[-1].msg.get_text_content() == "Hi from the fallback!"
    assert agent.state.context[-1].get_text_content() == "Hi from the fallback!"


class Weather(BaseModel):
    city: str
    celsius: int


FORCED = {  # how each provider's second request asked for the structured-output tool
    "openai": lambda body, name: (
        body["tool_choice"] == {"type": "function", "function": {"name": name}}
    ),
    "anthropic": lambda body, name: (
        body["tool_choice"] == {"type": "auto"}
    ),  # thinking: refused, so auto
    "gemini": lambda body, name: (
        body["toolConfig"]["functionCallingConfig"]
        == {"mode": "ANY", "allowedFunctionNames": [name]}
    ),
    "dashscope": lambda body, name: (
        body["parameters"]["tool_choice"] == "auto"
    ),  # thinking: refused, so auto
    "ollama": lambda body, name: "tool_choice" not in body,  # Ollama cannot force at all
}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_structured_output_on_every_provider(server: ReplayServer, provider: str) -> None:
    from tether._loop.run import STRUCTURED_TOOL

    kwargs = {"thinking": True} if provider in ("anthropic", "dashscope") else {}
    server.add(
        stream_reply(provider, [("text", "It is 21°C in Paris.")]),  # ignores the schema at first
        stream_reply(
            provider,
            [
                ("call", 0, "call_s", STRUCTURED_TOOL),
                ("args", 0, '{"city": "Paris", "celsius": 21}'),
            ],
        ),
    )
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=make_model(provider, server.url, **kwargs),
    )
    msg = await agent.reply(UserMsg("user", "Weather in Paris as JSON"), structured_schema=Weather)
    assert Weather.model_validate(msg.metadata["structured_output"]) == Weather(
        city="Paris", celsius=21
    )
    server.assert_done()
    second = server.requests[1].json()
    assert FORCED[provider](second, STRUCTURED_TOOL)
    if provider in (
        "anthropic",
        "dashscope",
        "ollama",
    ):  # the provider's own reminder replaced forcing
        assert f"Reply now by calling the tool `{STRUCTURED_TOOL}`" in json.dumps(second)
