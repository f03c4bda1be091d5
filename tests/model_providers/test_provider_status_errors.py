"""Every HTTP status a provider documents, through its SDK: the typed error, whether tether
retries it, the Retry-After it reads, and a message that says what to do."""

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, error_reply, make_model

from tether.errors import (
    ContextOverflowError,
    ModelAuthenticationError,
    ModelError,
    ModelResponseError,
    ModelRetryableError,
    RateLimitError,
)
from tether.message import UserMsg
from tether.model import ChatRequest

REQUEST = ChatRequest([UserMsg("user", "hi")])

EXPECTED = {  # status: (error type, retried, words the message must hold)
    400: (ModelResponseError, False, "refused the request"),
    401: (ModelAuthenticationError, False, "API_KEY"),
    403: (ModelAuthenticationError, False, "API_KEY"),
    404: (ModelResponseError, False, "check the model name"),
    408: (ModelRetryableError, True, "tether retries it"),
    409: (ModelRetryableError, True, "tether retries it"),
    413: (ContextOverflowError, False, "compress_context"),
    422: (ModelResponseError, False, "refused the request"),
    429: (RateLimitError, True, "rate limit"),
    500: (ModelRetryableError, True, "fallback_model"),
    502: (ModelRetryableError, True, "tether retries it"),
    503: (ModelRetryableError, True, "tether retries it"),
    504: (ModelRetryableError, True, "tether retries it"),
    529: (ModelRetryableError, True, "tether retries it"),  # Anthropic: overloaded
}


async def fail(server: ReplayServer, provider: str, reply) -> tuple[ModelError, object]:
    server.add(reply)
    model = make_model(provider, server.url)
    with pytest.raises(ModelError) as caught:
        async for _ in model.stream(REQUEST):
            pass
    server.assert_done()
    return caught.value, model


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("status", sorted(EXPECTED))
async def test_each_status_maps_to_its_typed_error(
    server: ReplayServer, provider: str, status: int
) -> None:
    error, model = await fail(server, provider, error_reply(provider, status, f"failed {status}"))
    kind, retried, advice = EXPECTED[status]
    assert type(error) is kind, (status, error)
    assert model.is_retryable(error) is retried
    assert f"failed {status}" in str(error)  # the provider's own words are kept
    assert advice in str(error)
    if status == 404:
        assert repr(model.model_name) in str(error)
    assert len(server.requests) == 1  # the SDK did not retry on its own


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    ("headers", "expected"),
    [({}, None), ({"retry-after": "7"}, 7.0), ({"retry-after": "0.5"}, 0.5)],
)
async def test_429_reads_retry_after_when_given(
    server: ReplayServer, provider: str, headers: dict, expected: float | None
) -> None:
    error, model = await fail(server, provider, error_reply(provider, 429, "slow", headers=headers))
    assert isinstance(error, RateLimitError)
    assert error.retry_after == expected and model.retry_after(error) == expected


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_503_with_retry_after_keeps_the_hint(server: ReplayServer, provider: str) -> None:
    reply = error_reply(provider, 503, "overloaded", headers={"retry-after": "3"})
    error, _ = await fail(server, provider, reply)
    assert isinstance(error, ModelRetryableError) and error.retry_after == 3.0
