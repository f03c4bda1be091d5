"""Broken streams through the real SDKs: cut cleanly anywhere, empty, usage only, garbled,
an error event, an abort after the end, and answers the provider cut short (`length`)."""

import json
import logging

import pytest
from provider_replay import ReplayServer, Reply
from provider_wire import PROVIDERS, SSE, make_model, stream_reply

from tether.errors import ModelError, ModelRetryableError, StreamInterruptedError
from tether.message import UserMsg
from tether.model import (
    ChatRequest,
    RetryNotice,
    RetryPolicy,
    StopDelta,
    TextDelta,
    UsageDelta,
    stream_with_retries,
)

REQUEST = ChatRequest([UserMsg("user", "hi")])
SCRIPT = [("text", "Hel"), ("text", "lo"), ("usage", 5, 3)]
ANSWER = [("text", "Hello again"), ("usage", 5, 2)]
END_MARKER = {  # bytes found only in the piece that says the answer is complete
    "openai": b'"finish_reason": "stop"',
    "anthropic": b"event: message_delta",
    "gemini": b"finishReason",
    "dashscope": b'"finish_reason": "stop"',
    "ollama": b'"done": true',
}


async def drain(model, request=REQUEST):
    seen = []
    try:
        async for delta in model.stream(request):
            seen.append(delta)
    except ModelError as error:
        return seen, error
    return seen, None


async def with_retries(model):
    items = []
    async for item in stream_with_retries(model, REQUEST, RetryPolicy(initial_delay=0)):
        items.append(item)
    return items


def text_of(items) -> str:
    return "".join(i.text for i in items if isinstance(i, TextDelta))


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_stream_ended_cleanly_anywhere_before_its_end_is_never_an_answer(
    server: ReplayServer, provider: str
) -> None:
    pieces = stream_reply(provider, SCRIPT).pieces()
    marker = next(i for i, p in enumerate(pieces) if END_MARKER[provider] in p)
    for cut in range(len(pieces) + 1):
        server.add(Reply(pieces[:cut], content_type=SSE))  # a clean end: the last chunk is sent
        seen, error = await drain(make_model(provider, server.url))
        if cut > marker:  # the end marker arrived: a whole answer
            assert error is None and text_of(seen) == "Hello", (cut, error)
            continue
        output = any(not isinstance(d, UsageDelta) for d in seen)
        assert error is not None, f"cut after {cut} pieces gave a silent answer {seen}"
        if output:
            assert isinstance(error, StreamInterruptedError), (cut, error)
            assert "ended before" in str(error) and "not replayed" in str(error)
        else:
            assert isinstance(error, ModelRetryableError), (cut, error)
    server.assert_done()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_empty_200_stream_is_retried(server: ReplayServer, provider: str) -> None:
    server.add(Reply([], content_type=SSE), stream_reply(provider, ANSWER))
    items = await with_retries(make_model(provider, server.url))
    server.assert_done()
    (notice,) = [i for i in items if isinstance(i, RetryNotice)]
    assert isinstance(notice.error, ModelRetryableError)
    assert f"{make_model(provider, server.url).provider} stream ended" in str(notice.error)
    assert text_of(items) == "Hello again"


def _usage_only(provider: str) -> list[bytes]:
    """A stream that carries token usage and nothing else: no text, no end marker."""
    if provider == "openai":
        usage = {"prompt_tokens": 5, "completion_tokens": 0, "total_tokens": 5}
        body = {"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o"}
        chunk = {**body, "choices": [], "usage": usage}
        return [f"data: {json.dumps(chunk)}\n\n".encode(), b"data: [DONE]\n\n"]
    if provider == "anthropic":
        return stream_reply(provider, [("usage", 5, 0)]).pieces()[:1]  # message_start
    if provider == "gemini":
        usage = {"promptTokenCount": 5, "totalTokenCount": 5}
        return [f"data: {json.dumps({'usageMetadata': usage})}\r\n\r\n".encode()]
    if provider == "dashscope":
        return stream_reply(provider, [("text", "")]).pieces()[:1]  # finish_reason "null"
    line = {"model": "llama3.1", "message": {"role": "assistant", "content": ""}, "done": False}
    return [(json.dumps(line) + "\n").encode()]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_stream_with_only_usage_is_retried(server: ReplayServer, provider: str) -> None:
    server.add(Reply(_usage_only(provider), content_type=SSE), stream_reply(provider, ANSWER))
    items = await with_retries(make_model(provider, server.url))
    server.assert_done()
    (notice,) = [i for i in items if isinstance(i, RetryNotice)]
    assert isinstance(notice.error, ModelRetryableError)
    assert text_of(items) == "Hello again"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_connection_lost_after_the_end_marker_loses_nothing(
    server: ReplayServer, provider: str
) -> None:
    reply = stream_reply(provider, SCRIPT)
    reply.drop_after = len(reply.pieces())  # every piece sent, then a reset instead of the end
    server.add(reply)
    seen, error = await drain(make_model(provider, server.url))
    server.assert_done()
    assert error is None
    assert text_of(seen) == "Hello"
    assert isinstance(seen[-1], StopDelta) and seen[-1].reason == "stop"


def _garbled(provider: str) -> bytes:
    if provider == "gemini":
        return b"data: {not json\r\n\r\n"
    if provider == "dashscope":
        return b"id:1\nevent:result\n:HTTP_STATUS/200\ndata:{not json\n\n"
    if provider == "ollama":
        return b"{not json\n"
    if provider == "anthropic":
        return b"event: content_block_delta\ndata: {not json\n\n"
    return b"data: {not json\n\n"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_garbled_event_before_output_is_retried(
    server: ReplayServer, provider: str
) -> None:
    server.add(Reply([_garbled(provider)], content_type=SSE), stream_reply(provider, ANSWER))
    items = await with_retries(make_model(provider, server.url))
    server.assert_done()
    (notice,) = [i for i in items if isinstance(i, RetryNotice)]
    assert isinstance(notice.error, ModelRetryableError)
    assert "could not be parsed" in str(notice.error)
    assert text_of(items) == "Hello again"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_a_garbled_event_after_output_is_an_interruption(
    server: ReplayServer, provider: str
) -> None:
    pieces = stream_reply(provider, SCRIPT).pieces()
    first = next(i for i, p in enumerate(pieces) if b"Hel" in p)
    server.add(
        Reply([*pieces[: first + 1], _garbled(provider), *pieces[first + 1 :]], content_type=SSE)
    )
    with pytest.raises(StreamInterruptedError, match="could not be parsed"):
        await with_retries(make_model(provider, server.url))
    server.assert_done()


def _error_event(provider: str) -> bytes:
    if provider == "openai":
        error = {"error": {"message": "The server had an error", "type": "server_error"}}
        return f"data: {json.dumps(error)}\n\n".encode()
    if provider == "anthropic":
        error = {"type": "error", "error": {"type": "api_error", "message": "Internal error"}}
        return f"event: error\ndata: {json.dumps(error)}\n\n".encode()
    if provider == "gemini":
        error = {"error": {"code": 503, "message": "The model is overloaded.", "status": "X"}}
        return f"data: {json.dumps(error)}\r\n\r\n".encode()
    if provider == "dashscope":
        error = {"code": "InternalError", "message": "Internal error", "request_id": "r"}
        return f"id:9\nevent:error\n:HTTP_STATUS/500\ndata:{json.dumps(error)}\n\n".encode()
    return (json.dumps({"error": "model runner has unexpectedly stopped"}) + "\n").encode()


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_error_event_before_output_is_retried(server: ReplayServer, provider: str) -> None:
    server.add(Reply([_error_event(provider)], content_type=SSE), stream_reply(provider, ANSWER))
    items = await with_retries(make_model(provider, server.url))
    server.assert_done()
    (notice,) = [i for i in items if isinstance(i, RetryNotice)]
    assert isinstance(notice.error, ModelRetryableError)
    assert "-1" not in str(notice.error)  # Ollama's in-stream errors carry no status
    assert text_of(items) == "Hello again"


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_error_event_after_output_is_an_interruption_naming_it(
    server: ReplayServer, provider: str
) -> None:
    pieces = stream_reply(provider, SCRIPT).pieces()
    first = next(i for i, p in enumerate(pieces) if b"Hel" in p)
    server.add(Reply([*pieces[: first + 1], _error_event(provider)], content_type=SSE))
    seen = []
    with pytest.raises(StreamInterruptedError) as caught:
        async for item in stream_with_retries(
            make_model(provider, server.url), REQUEST, RetryPolicy(initial_delay=0)
        ):
            seen.append(item)
    server.assert_done()
    assert not any(isinstance(i, RetryNotice) for i in seen)  # half an answer is not replayed
    assert text_of(seen) == "Hel"
    message = str(caught.value)
    said = ("server had an error", "Internal error", "overloaded", "unexpectedly stopped")
    assert any(w in message for w in said)
    assert "tether retries" not in message  # the retry advice does not apply any more


TRUNCATED = {  # provider: its own word for "the output token limit was reached"
    "openai": "length",
    "anthropic": "max_tokens",
    "gemini": "MAX_TOKENS",
    "dashscope": "length",
    "ollama": "length",
}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_an_answer_cut_by_the_token_limit_is_reported(
    server: ReplayServer, caplog, provider: str
) -> None:
    server.add(
        stream_reply(provider, [("text", "The answer is"), ("stop", TRUNCATED[provider])]),
        stream_reply(provider, [("text", "Whole.")]),
    )
    model = make_model(provider, server.url)
    with caplog.at_level(logging.WARNING, logger="tether.model"):
        cut = await model.generate(REQUEST)
    whole = await model.generate(REQUEST)
    server.assert_done()
    assert cut.stop_reason == "length" and cut.content[0].text == "The answer is"
    assert whole.stop_reason == "stop"
    (record,) = [r for r in caplog.records if r.name == "tether.model"]
    assert record.levelno == logging.WARNING
    assert (
        "output token limit" in record.getMessage() and TRUNCATED[provider] in record.getMessage()
    )


async def test_a_gemini_answer_blocked_by_safety_is_reported(server: ReplayServer) -> None:
    server.add(stream_reply("gemini", [("stop", "SAFETY")]))
    response = await make_model("gemini", server.url).generate(REQUEST)
    server.assert_done()
    assert response.content == [] and response.stop_reason == "content_filter"


def _is_closed(chunks) -> bool:
    """Whether an SDK stream let go of its HTTP response."""
    if hasattr(chunks, "ag_frame"):  # an async generator (ollama, google-genai)
        return chunks.ag_frame is None
    inner = getattr(chunks, "_inner", chunks)  # dashscope wraps its stream
    response = getattr(inner, "response", None) or inner._response
    return response.is_closed


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_leaving_a_stream_early_closes_its_response_at_once(
    server: ReplayServer, provider: str
) -> None:
    server.add(stream_reply(provider, [("text", f"t{i} ") for i in range(40)]))
    model = make_model(provider, server.url)
    opened = []
    real_open = model._open

    async def spy(request):
        opened.append(await real_open(request))
        return opened[-1]

    model._open = spy
    stream = model.stream(REQUEST)
    assert isinstance(await stream.__anext__(), TextDelta)
    await stream.aclose()  # the consumer stops reading (a cancelled reply does the same)
    # Not left to the garbage collector: the connection is released now.
    assert _is_closed(opened[0].chunks)
