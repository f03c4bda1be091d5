"""Provider errors on the wire: 429 then success, dropped connections, context overflow, auth."""

import json

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, error_reply, make_model, stream_reply

from tether.credential import (
    AnthropicCredential,
    DashScopeCredential,
    GeminiCredential,
    OpenAICredential,
)
from tether.errors import (
    ContextOverflowError,
    ModelAuthenticationError,
    ModelRetryableError,
    RateLimitError,
    StreamInterruptedError,
)
from tether.message import UserMsg
from tether.model import (
    AnthropicChatModel,
    ChatRequest,
    DashScopeChatModel,
    GeminiChatModel,
    OpenAIChatModel,
    RetryNotice,
    RetryPolicy,
    TextDelta,
    stream_with_retries,
)

REQUEST = ChatRequest([UserMsg("user", "hi")])
ANSWER = [("text", "Hello"), ("text", " again"), ("usage", 5, 2)]

RATE_LIMITS = {  # provider: (reply, the retry_after tether must read from it)
    "openai": (
        lambda: error_reply(
            "openai",
            429,
            "Rate limit reached for gpt-4o",
            code="rate_limit_exceeded",
            headers={"retry-after-ms": "20"},
        ),
        0.02,
    ),
    "anthropic": (
        lambda: error_reply(
            "anthropic",
            429,
            "Number of request tokens has exceeded your per-minute rate limit",
            code="rate_limit_error",
            headers={"retry-after": "0"},
        ),
        0.0,
    ),
    "gemini": (
        lambda: error_reply(
            "gemini",
            429,
            "Resource has been exhausted (e.g. check quota).",
            code="RESOURCE_EXHAUSTED",
            headers={"retryDelay": "0.01s"},
        ),
        0.01,
    ),
    "dashscope": (
        lambda: error_reply(
            "dashscope",
            429,
            "Requests rate limit exceeded, please try again later.",
            code="Throttling.RateQuota",
            headers={"retry-after": "0"},
        ),
        0.0,
    ),
    "ollama": (lambda: error_reply("ollama", 429, "too many requests"), None),
}

OVERFLOWS = {
    "openai": error_reply(
        "openai",
        400,
        "This model's maximum context length is 128000 tokens. However, your messages resulted in 130211 tokens. Please reduce the length of the messages.",
        code="context_length_exceeded",
    ),
    "anthropic": error_reply(
        "anthropic", 400, "prompt is too long: 208112 tokens > 200000 maximum"
    ),
    "gemini": error_reply(
        "gemini",
        400,
        "The input token count (1210003) exceeds the maximum number of tokens allowed (1048576).",
    ),
    "dashscope": error_reply(
        "dashscope", 400, "Range of input length should be [1, 30720]", code="InvalidParameter"
    ),
    "ollama": error_reply("ollama", 400, "the input length exceeds the context length"),
}

AUTH = {
    "openai": (
        error_reply("openai", 401, "Incorrect API key provided: sk-test.", code="invalid_api_key"),
        "OPENAI_API_KEY",
    ),
    "anthropic": (
        error_reply("anthropic", 401, "invalid x-api-key", code="authentication_error"),
        "ANTHROPIC_API_KEY",
    ),
    "gemini": (
        error_reply("gemini", 400, "API key not valid. Please pass a valid API key."),
        "GEMINI_API_KEY",
    ),
    "dashscope": (
        error_reply("dashscope", 401, "Invalid API-key provided.", code="InvalidApiKey"),
        "DASHSCOPE_API_KEY",
    ),
    "ollama": (error_reply("ollama", 401, "unauthorized"), "OLLAMA_API_KEY"),
}


async def collect(model, request=REQUEST, policy=None):
    items = []
    async for item in stream_with_retries(model, request, policy or RetryPolicy(initial_delay=0)):
        items.append(item)
    return items


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_429_with_retry_after_then_success(server: ReplayServer, provider: str) -> None:
    make_reply, hint = RATE_LIMITS[provider]
    server.add(make_reply(), stream_reply(provider, ANSWER))
    items = await collect(make_model(provider, server.url))
    server.assert_done()
    notices = [i for i in items if isinstance(i, RetryNotice)]
    assert len(notices) == 1
    (notice,) = notices
    assert isinstance(notice.error, RateLimitError) and notice.attempt == 1
    assert notice.error.retry_after == hint and notice.delay == (hint or 0.0)
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Hello again"
    assert len(server.requests) == 2  # the SDK did not retry on its own


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_connection_dropped_mid_stream_is_not_replayed(
    server: ReplayServer, provider: str
) -> None:
    reply = stream_reply(
        provider, [("text", "Hel"), ("text", "lo"), ("text", " world"), ("usage", 5, 3)]
    )
    reply.drop_after = 3  # after the first text piece or two have gone out
    server.add(reply, stream_reply(provider, ANSWER))
    seen = []
    with pytest.raises(StreamInterruptedError) as caught:
        async for item in stream_with_retries(
            make_model(provider, server.url), REQUEST, RetryPolicy(initial_delay=0)
        ):
            seen.append(item)
    assert "not replayed" in str(caught.value)
    assert not any(isinstance(i, RetryNotice) for i in seen)
    assert any(isinstance(i, TextDelta) for i in seen)
    assert (
        len(server.requests) == 1 and len(server.queue) == 1
    )  # the second answer was never asked for


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_connection_dropped_before_first_chunk_is_retried(
    server: ReplayServer, provider: str
) -> None:
    dropped = stream_reply(provider, ANSWER)
    dropped.drop_after = 0  # status and headers, then the connection dies
    server.add(dropped, stream_reply(provider, ANSWER))
    items = await collect(make_model(provider, server.url))
    server.assert_done()
    (notice,) = [i for i in items if isinstance(i, RetryNotice)]
    assert isinstance(notice.error, ModelRetryableError)
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Hello again"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_400_context_length_raises_context_overflow(
    server: ReplayServer, provider: str
) -> None:
    server.add(OVERFLOWS[provider])
    model = make_model(provider, server.url)
    with pytest.raises(ContextOverflowError) as caught:
        await collect(
            model, policy=RetryPolicy(initial_delay=0, fallback=make_model(provider, server.url))
        )
    server.assert_done()  # neither retried nor handed to the fallback: a bigger prompt will not fit there either
    assert "compress_context" in str(caught.value)
    assert not model.is_retryable(caught.value)


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_401_names_the_credential_to_set(server: ReplayServer, provider: str) -> None:
    reply, env = AUTH[provider]
    server.add(reply)
    with pytest.raises(ModelAuthenticationError) as caught:
        await collect(make_model(provider, server.url))
    server.assert_done()
    assert env in str(caught.value)


MISSING = [
    (OpenAIChatModel, OpenAICredential, ["OPENAI_API_KEY"]),
    (AnthropicChatModel, AnthropicCredential, ["ANTHROPIC_API_KEY"]),
    (GeminiChatModel, GeminiCredential, ["GEMINI_API_KEY", "GOOGLE_API_KEY"]),
    (DashScopeChatModel, DashScopeCredential, ["DASHSCOPE_API_KEY"]),
]


@pytest.mark.parametrize(("model_cls", "credential_cls", "envs"), MISSING)
async def test_missing_key_fails_before_any_request(
    server: ReplayServer, monkeypatch, model_cls, credential_cls, envs
) -> None:
    for env in envs:
        monkeypatch.delenv(env, raising=False)
    model = (
        model_cls(None, base_url=server.url)
        if model_cls is not OpenAIChatModel
        else model_cls(None)
    )
    with pytest.raises(ModelAuthenticationError) as caught:
        await collect(model)
    assert all(env in str(caught.value) for env in envs)
    assert credential_cls.__name__ in str(caught.value)
    assert server.requests == []


async def test_fallback_model_takes_over_when_the_first_keeps_failing(server: ReplayServer) -> None:
    server.add(*(error_reply("openai", 503, "The server is overloaded") for _ in range(3)))
    server.add(stream_reply("dashscope", ANSWER))
    primary = make_model("openai", server.url)
    fallback = make_model("dashscope", server.url)
    items = await collect(
        primary, policy=RetryPolicy(max_retries=2, initial_delay=0, fallback=fallback)
    )
    server.assert_done()
    notices = [i for i in items if isinstance(i, RetryNotice)]
    assert [n.next_model_name for n in notices] == ["gpt-4o", "gpt-4o", "qwen-max"]
    assert all(isinstance(n.error, ModelRetryableError) for n in notices)
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Hello again"


async def test_anthropic_error_event_before_output_is_retried(server: ReplayServer) -> None:
    from provider_replay import Reply

    start = stream_reply("anthropic", [("text", "x")]).pieces()[0]  # message_start only
    overloaded = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
    body = [start, f"event: error\ndata: {json.dumps(overloaded)}\n\n".encode()]
    server.add(Reply(body, content_type="text/event-stream"), stream_reply("anthropic", ANSWER))
    items = await collect(make_model("anthropic", server.url))
    server.assert_done()
    (notice,) = [i for i in items if isinstance(i, RetryNotice)]
    assert isinstance(notice.error, ModelRetryableError) and "Overloaded" in str(notice.error)
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Hello again"


async def test_openai_error_event_after_output_is_an_interruption(server: ReplayServer) -> None:
    from provider_replay import Reply

    pieces = stream_reply("openai", [("text", "partial")]).pieces()[:2]
    error = {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
        }
    }
    server.add(
        Reply(
            [*pieces, f"data: {json.dumps(error)}\n\n".encode()], content_type="text/event-stream"
        )
    )
    with pytest.raises(StreamInterruptedError, match="server had an error"):
        await collect(make_model("openai", server.url))
    server.assert_done()
