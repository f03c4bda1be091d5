"""Ollama with no server at the address: one error naming the host and what to do."""

import socket

import pytest

from tether.errors import ModelRetryableError
from tether.message import UserMsg
from tether.model import ChatRequest, OllamaChatModel, RetryPolicy, stream_with_retries


@pytest.fixture
def refused_url():
    with socket.socket() as sock:  # bound, never listening: connections are refused
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


async def test_no_server_names_the_host_and_the_fix(refused_url: str) -> None:
    url = refused_url
    model = OllamaChatModel(model="llama3.1", base_url=url)
    policy = RetryPolicy(initial_delay=0, max_retries=0)
    with pytest.raises(ModelRetryableError) as caught:
        async for _ in stream_with_retries(model, ChatRequest([UserMsg("user", "hi")]), policy):
            pass
    await model.aclose()
    text = str(caught.value)
    assert f"cannot reach Ollama at {url}" in text
    assert "`ollama serve`" in text and "OLLAMA_HOST" in text
