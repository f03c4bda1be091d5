"""Prompt caching on the wire: where the cache markers go, the OpenAI cache key, the volatile
prompt sent last, cache reads and writes in the usage, and their price."""

import json

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, make_model, stream_reply

from tether.errors import ConfigError
from tether.message import (
    AssistantMsg,
    ChatUsage,
    SystemMsg,
    ToolCallBlock,
    ToolResultBlock,
    UserMsg,
)
from tether.model import ChatRequest, ModelPrice, PromptCache, UsageDelta, cost, set_price
from tether.model._pricing import reset_prices

STABLE = "You are a careful assistant.\n\n<plugin_catalogue>briefs</plugin_catalogue>"
VOLATILE = '<plugin name="Notes" module_name="note" state="active" rounds_left="2">…</plugin>'
SYSTEM = f"{STABLE}\n\n{VOLATILE}\n\n<context_summary>\nearlier\n</context_summary>"
TOOLS = [
    {"name": "activate_plugin", "description": "Wake a plugin.", "parameters": {"type": "object"}},
    {"name": "get_weather", "description": "Weather.", "parameters": {"type": "object"}},
]


def conversation(turns: int = 1) -> list:
    messages: list = [SystemMsg("system", SYSTEM)]
    for i in range(turns):
        call = ToolCallBlock(id=f"c{i}", name="get_weather", input='{"city": "Oslo"}')
        result = ToolResultBlock(id=f"c{i}", name="get_weather", output="sunny")
        messages += [UserMsg("user", f"question {i}"), AssistantMsg("assistant", [call, result])]
    return messages


def request(turns: int = 1) -> ChatRequest:
    return ChatRequest(
        conversation(turns), tools=list(TOOLS), volatile_prompt=VOLATILE, stable_tools=list(TOOLS)
    )


async def send(server: ReplayServer, provider: str, req: ChatRequest, **kwargs):
    server.add(stream_reply(provider, [("text", "ok"), *kwargs.pop("script", [])]))
    usage = None
    name = kwargs.pop("model", None)
    model = make_model(provider, server.url, **kwargs)
    if name is not None:
        model.model_name = name
    async for delta in model.stream(req):
        if isinstance(delta, UsageDelta):
            usage = delta.usage
    return server.requests[-1].json(), usage


def markers(body: dict) -> list[str]:
    """Where the Anthropic request carries `cache_control`, in order."""
    found = [f"tool:{t['name']}" for t in body.get("tools", []) if "cache_control" in t]
    system = body.get("system")
    found += ["system" for b in system or [] if isinstance(b, dict) and "cache_control" in b]
    for i, message in enumerate(body["messages"]):
        found += [f"message:{i}" for b in message["content"] if "cache_control" in b]
    return found


async def test_anthropic_marks_the_tools_the_system_and_the_last_two_user_turns(server) -> None:
    body, _ = await send(server, "anthropic", request(turns=3))
    messages = body["messages"]
    users = [i for i, m in enumerate(messages) if m["role"] == "user"]
    assert markers(body) == [
        "tool:get_weather",
        "system",
        f"message:{users[-2]}",
        f"message:{users[-1]}",
    ]
    assert body["tools"][-1]["cache_control"] == {"type": "ephemeral"}
    # the volatile plugin block left the system prompt and closes the request, after the mark
    assert (
        body["system"][0]["text"] == f"{STABLE}\n\n<context_summary>\nearlier\n</context_summary>"
    )
    last = messages[-1]["content"]
    assert last[-1] == {"type": "text", "text": VOLATILE}
    assert "cache_control" in last[-2] and "cache_control" not in last[-1]


@pytest.mark.parametrize("turns", [1, 2, 8])
async def test_anthropic_never_sends_more_than_four_markers(server, turns: int) -> None:
    body, _ = await send(server, "anthropic", request(turns=turns))
    assert 1 <= len(markers(body)) <= 4


async def test_anthropic_one_hour_ttl_and_switching_caching_off(server) -> None:
    body, _ = await send(server, "anthropic", request(), prompt_cache=PromptCache(ttl="1h"))
    assert body["system"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    off, _ = await send(server, "anthropic", request(), prompt_cache=False)
    assert markers(off) == [] and off["system"] == SYSTEM  # as before: volatile text in place
    assert all(VOLATILE not in json.dumps(m) for m in off["messages"])


def test_a_bad_ttl_says_what_to_use() -> None:
    with pytest.raises(ConfigError, match="'5m' or '1h'"):
        PromptCache(ttl="10m")  # type: ignore[arg-type]


async def test_openai_sends_one_prompt_cache_key_for_every_step_of_a_session(server) -> None:
    first, _ = await send(server, "openai", request(turns=1))
    later, _ = await send(server, "openai", request(turns=4))
    key = first["prompt_cache_key"]
    assert key.startswith("tether-") and later["prompt_cache_key"] == key
    assert first["messages"][0]["content"].startswith(STABLE)
    assert VOLATILE not in first["messages"][0]["content"]
    assert first["messages"][-1] == {"role": "user", "content": VOLATILE}
    other = ChatRequest([SystemMsg("system", "Another agent."), UserMsg("user", "hi")])
    assert (await send(server, "openai", other))[0]["prompt_cache_key"] != key
    named, _ = await send(server, "openai", request(), prompt_cache=PromptCache(key="user-7"))
    assert named["prompt_cache_key"] == "user-7"
    off, _ = await send(server, "openai", request(), prompt_cache=False)
    assert "prompt_cache_key" not in off and VOLATILE in off["messages"][0]["content"]


async def test_dashscope_marks_the_prefix_only_for_models_with_explicit_cache(server) -> None:
    model_kwargs = {"model": "qwen3-max"}
    body, _ = await send(server, "dashscope", request(), **model_kwargs)
    messages = body["input"]["messages"]
    assert messages[0]["content"][-1]["cache_control"] == {"type": "ephemeral"}
    marked = [m for m in messages if "cache_control" in (m.get("content") or [{}])[-1]]
    assert [m["role"] for m in marked] == ["system", "tool"]
    # marked or not, a message's text goes as a part list: the same bytes in the next request
    assert all(isinstance(m["content"], list) for m in messages[:-1] if m["role"] != "assistant")
    assert messages[-1] == {"role": "user", "content": VOLATILE}
    plain, _ = await send(server, "dashscope", request())  # qwen-max caches implicitly
    assert not any(isinstance(m.get("content"), list) for m in plain["input"]["messages"])
    assert plain["input"]["messages"][-1]["content"] == VOLATILE


async def test_gemini_keeps_the_system_instruction_stable_and_sends_the_volatile_last(
    server,
) -> None:
    body, _ = await send(server, "gemini", request())
    system = body["systemInstruction"]["parts"][0]["text"]
    assert VOLATILE not in system and system.startswith(STABLE)
    assert body["contents"][-1]["parts"][-1] == {"text": VOLATILE}


USAGE = {  # provider: (script usage step, expected reads, expected writes)
    "anthropic": (("usage", 100, 5, 800, 300), 800, 300),
    "openai": (("usage", 1200, 5, 1024), 1024, 0),
    "gemini": (("usage", 1200, 5, 1000), 1000, 0),
    "dashscope": (("usage", 1200, 5, 900, 200), 900, 200),
    "ollama": (("usage", 1200, 5), 0, 0),  # Ollama reports no cache counts
}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cache_reads_and_writes_reach_the_usage(server, provider: str) -> None:
    step, reads, writes = USAGE[provider]
    _, usage = await send(server, provider, request(), script=[step])
    assert usage is not None
    assert (usage.cache_read_tokens, usage.cache_write_tokens) == (reads, writes)
    assert usage.input_tokens == 1200


def test_the_cost_bills_cache_reads_and_writes_at_their_own_prices() -> None:
    usage = ChatUsage(
        input_tokens=1200, output_tokens=10, cache_read_tokens=800, cache_write_tokens=300
    )
    plain = 100 * 3.00 + 800 * 0.30 + 300 * 3.75 + 10 * 15.00
    assert cost(usage, "claude-sonnet-4-6") == pytest.approx(plain / 1e6)
    hour = 100 * 3.00 + 800 * 0.30 + 300 * 6.00 + 10 * 15.00
    assert cost(usage, "claude-sonnet-4-6", cache_ttl="1h") == pytest.approx(hour / 1e6)
    assert cost(usage, "gemini-2.5-flash") == pytest.approx(
        (400 * 0.30 + 800 * 0.03 + 10 * 2.5) / 1e6
    )
    try:
        set_price("my-model", ModelPrice(1.0, 2.0))  # no cache prices: billed as input
        assert cost(usage, "my-model") == pytest.approx((1200 * 1.0 + 10 * 2.0) / 1e6)
    finally:
        reset_prices()


async def test_a_one_hour_cache_write_is_priced_at_the_one_hour_rate(server) -> None:
    script = [("usage", 100, 10, 800, 300)]
    cache = PromptCache(ttl="1h")
    _, usage = await send(server, "anthropic", request(), script=script, prompt_cache=cache)
    assert usage is not None and usage.cost == pytest.approx(
        (100 * 3.00 + 800 * 0.30 + 300 * 6.00 + 10 * 15.00) / 1e6
    )
