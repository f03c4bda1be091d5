"""Credentials: read from the environment, never shown in repr, dumps, logs or events."""

import logging

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, make_model, stream_reply

from tether.credential import (
    AnthropicCredential,
    DashScopeCredential,
    GeminiCredential,
    OllamaCredential,
    OpenAICredential,
)
from tether.message import UserMsg
from tether.model import ChatRequest, StreamAssembler, from_string

SECRET = "sk-very-secret-0123456789"
CREDENTIALS = [
    DashScopeCredential,
    OpenAICredential,
    AnthropicCredential,
    GeminiCredential,
    OllamaCredential,
]


@pytest.mark.parametrize("cls", CREDENTIALS)
def test_secret_never_shown(cls) -> None:
    credential = cls(api_key=SECRET, base_url="http://127.0.0.1:1")
    for text in (
        repr(credential),
        str(credential),
        f"{credential}",
        str(credential.model_dump()),
        credential.model_dump_json(),
    ):
        assert SECRET not in text
    assert "**********" in repr(credential)
    assert credential.get_api_key() == SECRET


@pytest.mark.parametrize(
    ("cls", "env"),
    [
        (DashScopeCredential, "DASHSCOPE_API_KEY"),
        (OpenAICredential, "OPENAI_API_KEY"),
        (AnthropicCredential, "ANTHROPIC_API_KEY"),
        (GeminiCredential, "GEMINI_API_KEY"),
        (GeminiCredential, "GOOGLE_API_KEY"),
        (OllamaCredential, "OLLAMA_API_KEY"),
    ],
)
def test_key_read_from_environment(monkeypatch, cls, env) -> None:
    for name in cls.api_key_env:
        monkeypatch.delenv(name, raising=False)
    assert cls().get_api_key() is None
    monkeypatch.setenv(env, SECRET)
    assert cls().get_api_key() == SECRET
    assert cls(api_key="explicit").get_api_key() == "explicit"  # an explicit key wins


def test_gemini_prefers_gemini_key(monkeypatch) -> None:
    monkeypatch.setenv("GOOGLE_API_KEY", "google")
    monkeypatch.setenv("GEMINI_API_KEY", "gemini")
    assert GeminiCredential().get_api_key() == "gemini"


def test_base_url_from_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    assert OpenAICredential(api_key="k").base_url == "http://127.0.0.1:8000/v1"
    monkeypatch.setenv("OLLAMA_HOST", "http://10.0.0.2:11434")
    assert from_string("ollama:llama3.1").base_url == "http://10.0.0.2:11434"


def test_credential_is_frozen_and_strict() -> None:
    credential = OpenAICredential(api_key="k")
    with pytest.raises(ValueError):
        credential.api_key = None  # type: ignore[misc]
    with pytest.raises(ValueError):
        OpenAICredential(api_kye="typo")  # type: ignore[call-arg]


def test_wrong_credential_type_is_rejected() -> None:
    from tether.model import DashScopeChatModel

    with pytest.raises(TypeError, match="DashScopeCredential"):
        DashScopeChatModel(OpenAICredential(api_key="k"), "qwen-max")  # type: ignore[arg-type]


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_secret_not_in_model_repr_logs_or_events(
    server: ReplayServer, caplog, provider: str
) -> None:
    model = make_model(provider, server.url)
    model.credential = type(model.credential)(api_key=SECRET, base_url=model.credential.base_url)
    server.add(stream_reply(provider, [("text", "ok"), ("usage", 3, 1)]))
    assembler = StreamAssembler(reply_id="r1")
    events = []
    with caplog.at_level(logging.DEBUG):
        async for delta in model.stream(ChatRequest([UserMsg("user", "hi")])):
            events.extend(assembler.feed(delta))
    events.extend(assembler.close())
    server.assert_done()
    if provider != "ollama":  # the key did reach the server...
        assert any(SECRET in v for v in server.requests[0].headers.values())
    else:
        assert server.requests[0].headers["authorization"] == f"Bearer {SECRET}"
    # ...but nowhere else.
    assert SECRET not in repr(model) and SECRET not in str(model)
    assert all(SECRET not in r.getMessage() for r in caplog.records)
    assert all(SECRET not in e.model_dump_json() for e in events)
