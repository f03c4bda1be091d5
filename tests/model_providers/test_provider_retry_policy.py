"""The retry policy: backoff bounds, jitter, Retry-After in every form (and capped), a cancel
during the backoff wait, and what is said when the fallback fails too."""

import asyncio
import time
from email.utils import formatdate

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, error_reply, make_model, stream_reply

from tether.errors import ModelAuthenticationError, RateLimitError, StreamInterruptedError
from tether.message import UserMsg
from tether.model import ChatRequest, RetryNotice, RetryPolicy, TextDelta, stream_with_retries
from tether.model.providers._errors import parse_retry_after

REQUEST = ChatRequest([UserMsg("user", "hi")])
ANSWER = [("text", "Hello again"), ("usage", 5, 2)]


def test_backoff_doubles_and_stays_within_its_bounds() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=30.0, jitter=0.0)
    assert [policy.delay(n, None) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]
    assert policy.delay(5000, None) == 30.0  # no float overflow after many attempts
    assert RetryPolicy(initial_delay=0.0).delay(3, None) == 0.0  # tests wait for nothing


def test_jitter_spreads_retries_below_the_backoff_never_above() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=30.0, jitter=0.5)
    for attempt, backoff in ((1, 1.0), (3, 4.0), (9, 30.0)):
        delays = [policy.delay(attempt, None) for _ in range(200)]
        assert all(backoff / 2 <= d <= backoff for d in delays)
        assert len(set(delays)) > 1  # clients that failed together do not retry together
    assert RetryPolicy().jitter > 0  # on by default


def test_retry_after_is_respected_in_full_but_capped() -> None:
    policy = RetryPolicy(initial_delay=1.0, max_delay=30.0, jitter=0.5)
    assert policy.delay(1, 7.0) == 7.0  # never earlier than the server asked, never jittered
    assert policy.delay(1, 0.2) >= 0.5  # a short hint does not undercut the backoff much
    assert policy.delay(1, 3600.0) == 60.0  # an hour-long hint does not stall the reply
    assert RetryPolicy(max_delay=120.0).delay(1, 3600.0) == 120.0


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"Retry-After": "1.5"}, 1.5),
        ({"retry-after-ms": "250"}, 0.25),
        ({"retry-after": "-3"}, 0.0),
        ({"retry-after": "nan"}, None),
        ({"retry-after": "inf"}, None),
        ({"retry-after-ms": "nan", "retry-after": "2"}, 2.0),
        ({"retry-after": "soon"}, None),
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}, 0.0),  # in the past
        ({"retry-after": "Wed, 21 Oct 2015 07:28:00 -0000"}, None),  # no zone: unknown
        ({}, None),
    ],
)
def test_retry_after_forms(headers: dict, expected: float | None) -> None:
    assert parse_retry_after(headers) == expected


@pytest.mark.parametrize("provider", ["openai", "anthropic", "dashscope"])
async def test_retry_after_as_an_http_date_through_the_sdk(
    server: ReplayServer, provider: str
) -> None:
    sent = time.time()
    due = int(sent) + 30  # an HTTP date has whole seconds
    when = formatdate(due, usegmt=True)
    server.add(error_reply(provider, 429, "slow down", headers={"retry-after": when}))
    items = []
    with pytest.raises(RateLimitError) as caught:
        async for item in stream_with_retries(
            make_model(provider, server.url), REQUEST, RetryPolicy(max_retries=0)
        ):
            items.append(item)
    server.assert_done()
    read = time.time()  # the wait is the date minus the time it was read (however slow)
    delay = caught.value.retry_after
    assert delay is not None and due - read - 0.01 <= delay <= due - sent + 0.01, delay
    assert "retries it with backoff" in str(caught.value)  # the message says what to do


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_cancel_during_the_backoff_wait_stops_at_once(
    server: ReplayServer, provider: str
) -> None:
    server.add(error_reply(provider, 503, "overloaded"), stream_reply(provider, ANSWER))
    policy = RetryPolicy(initial_delay=3600.0, max_delay=3600.0, jitter=0.0)
    waiting = asyncio.Event()

    async def consume() -> None:
        async for item in stream_with_retries(make_model(provider, server.url), REQUEST, policy):
            if isinstance(item, RetryNotice):
                assert item.delay == 3600.0
                waiting.set()  # the next step of the generator is the hour-long sleep

    task = asyncio.create_task(consume())
    await waiting.wait()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await asyncio.wait_for(task, timeout=10)  # a bound, not a wait: it ends at once
    assert len(server.requests) == 1 and len(server.queue) == 1  # no retry was sent


async def test_a_fallback_that_fails_too_raises_its_error_and_names_the_first(
    server: ReplayServer,
) -> None:
    server.add(*(error_reply("openai", 503, "The server is overloaded") for _ in range(2)))
    server.add(error_reply("anthropic", 401, "invalid x-api-key", code="authentication_error"))
    policy = RetryPolicy(
        max_retries=1, initial_delay=0, fallback=make_model("anthropic", server.url)
    )
    notices = []
    with pytest.raises(ModelAuthenticationError) as caught:
        async for item in stream_with_retries(make_model("openai", server.url), REQUEST, policy):
            notices.append(item)
    server.assert_done()
    assert [n.next_model_name for n in notices] == ["gpt-4o", "claude-sonnet-4-6"]
    assert "ANTHROPIC_API_KEY" in str(caught.value)
    notes = "\n".join(getattr(caught.value, "__notes__", []))
    assert "fallback" in notes and "gpt-4o" in notes and "overloaded" in notes


async def test_a_fallback_broken_after_output_is_not_replayed(server: ReplayServer) -> None:
    server.add(error_reply("openai", 401, "Incorrect API key", code="invalid_api_key"))
    broken = stream_reply("dashscope", [("text", "Hal"), ("text", "f"), ("usage", 5, 2)])
    broken.drop_after = 1
    server.add(broken)
    policy = RetryPolicy(initial_delay=0, fallback=make_model("dashscope", server.url))
    items = []
    with pytest.raises(StreamInterruptedError):
        async for item in stream_with_retries(make_model("openai", server.url), REQUEST, policy):
            items.append(item)
    server.assert_done()
    assert "".join(i.text for i in items if isinstance(i, TextDelta)) == "Hal"
    assert [type(i).__name__ for i in items].count("RetryNotice") == 1
