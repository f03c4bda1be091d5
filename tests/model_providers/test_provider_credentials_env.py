"""Credentials from the environment: precedence, empty values, stray whitespace, and a key
never sent to a provider it was not meant for; no key in any error message."""

import pytest
from provider_replay import ReplayServer
from provider_wire import PROVIDERS, error_reply, make_model, stream_reply

from tether.credential import (
    AnthropicCredential,
    DashScopeCredential,
    GeminiCredential,
    OllamaCredential,
    OpenAICredential,
)
from tether.errors import ModelAuthenticationError, ModelError
from tether.message import UserMsg
from tether.model import ChatRequest, from_string

CREDENTIALS = [
    (DashScopeCredential, "DASHSCOPE_API_KEY", "DASHSCOPE_BASE_URL"),
    (OpenAICredential, "OPENAI_API_KEY", "OPENAI_BASE_URL"),
    (AnthropicCredential, "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    (GeminiCredential, "GEMINI_API_KEY", "GOOGLE_GEMINI_BASE_URL"),
    (OllamaCredential, "OLLAMA_API_KEY", "OLLAMA_HOST"),
]
REQUEST = ChatRequest([UserMsg("user", "hi")])


@pytest.fixture(autouse=True)
def clean_env(monkeypatch) -> None:
    for cls, _, _ in CREDENTIALS:
        for name in (*cls.api_key_env, *cls.base_url_env):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)


@pytest.mark.parametrize(("cls", "key_env", "url_env"), CREDENTIALS)
def test_whitespace_around_a_key_or_url_is_dropped(monkeypatch, cls, key_env, url_env) -> None:
    # A key pasted with its newline used to reach the SDK, which failed with a misleading
    # "connection error" (an illegal header value) and was retried three times.
    assert cls(api_key="  sk-abc\n", base_url=" http://h/v1 \n").get_api_key() == "sk-abc"
    assert cls(api_key="k", base_url=" http://h/v1 \n").base_url == "http://h/v1"
    monkeypatch.setenv(key_env, "sk-env\n")
    monkeypatch.setenv(url_env, "\thttp://env/v1 ")
    credential = cls()
    assert credential.get_api_key() == "sk-env" and credential.base_url == "http://env/v1"


@pytest.mark.parametrize(("cls", "key_env", "url_env"), CREDENTIALS)
def test_an_empty_or_blank_key_counts_as_not_given(monkeypatch, cls, key_env, url_env) -> None:
    assert cls(api_key="").get_api_key() is None
    assert cls(api_key=" \n").get_api_key() is None
    assert cls(base_url=" ").base_url is None
    monkeypatch.setenv(key_env, "   ")
    assert cls().get_api_key() is None  # a blank variable is not a key
    monkeypatch.setenv(key_env, "sk-env")
    assert cls(api_key="").get_api_key() == "sk-env"  # nor is an empty argument
    assert cls(api_key="sk-given").get_api_key() == "sk-given"  # a real argument wins


def test_gemini_falls_back_to_google_key_when_gemini_key_is_blank(monkeypatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", " ")
    monkeypatch.setenv("GOOGLE_API_KEY", "google")
    assert GeminiCredential().get_api_key() == "google"


async def test_a_key_with_a_newline_reaches_the_server_clean(server: ReplayServer) -> None:
    server.add(stream_reply("openai", [("text", "ok")]))
    model = make_model("openai", server.url)
    model.credential = OpenAICredential(api_key="sk-test\n", base_url=server.url + "/v1")
    async for _ in model.stream(REQUEST):
        pass
    server.assert_done()
    assert server.requests[0].headers["authorization"] == "Bearer sk-test"


async def test_a_blank_key_fails_before_any_request(server: ReplayServer) -> None:
    model = make_model("anthropic", server.url)
    model.credential = AnthropicCredential(api_key="  ", base_url=server.url)
    with pytest.raises(ModelAuthenticationError, match="ANTHROPIC_API_KEY"):
        async for _ in model.stream(REQUEST):
            pass
    assert server.requests == []


async def test_deepseek_never_gets_the_openai_key(server: ReplayServer, monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    model = from_string("deepseek:deepseek-chat", base_url=server.url)
    with pytest.raises(ModelAuthenticationError) as caught:
        async for _ in model.stream(REQUEST):
            pass
    assert server.requests == []  # nothing was sent, least of all the OpenAI key
    assert "DEEPSEEK_API_KEY" in str(caught.value)
    monkeypatch.setenv("DEEPSEEK_API_KEY", "sk-deepseek\n")
    assert from_string("deepseek:deepseek-chat").credential.get_api_key() == "sk-deepseek"


ECHOES = {  # servers that quote the key they were given back in the error
    "openai": lambda key: error_reply("openai", 401, f"Incorrect API key provided: {key}."),
    "anthropic": lambda key: error_reply("anthropic", 400, f"bad header x-api-key: {key}"),
    "gemini": lambda key: error_reply("gemini", 403, f"key {key} is blocked"),
    "dashscope": lambda key: error_reply("dashscope", 500, f"internal error for {key}"),
    "ollama": lambda key: error_reply("ollama", 404, f"no model for token {key}"),
}


@pytest.mark.parametrize("provider", PROVIDERS)
async def test_no_key_in_any_error_message(server: ReplayServer, provider: str) -> None:
    secret = "sk-echoed-0123456789"
    model = make_model(provider, server.url)
    model.credential = type(model.credential)(api_key=secret, base_url=model.credential.base_url)
    server.add(ECHOES[provider](secret))
    with pytest.raises(ModelError) as caught:
        async for _ in model.stream(REQUEST):
            pass
    server.assert_done()
    error = caught.value
    assert secret not in str(error) and "[redacted]" in str(error)
    assert error.__cause__ is None or secret not in str(error.__cause__)
    assert error.__suppress_context__  # the SDK's message, which has the key, is not shown


@pytest.mark.parametrize("variable", ["GOOGLE_GENAI_USE_VERTEXAI", "GOOGLE_GENAI_USE_ENTERPRISE"])
async def test_gemini_stays_on_the_gemini_api_whatever_the_sdk_variables_say(
    server: ReplayServer, monkeypatch, variable: str
) -> None:
    # google-genai reads these to switch to Vertex AI: other URLs, other auth. A
    # `GeminiChatModel` with an API key is the Gemini Developer API.
    monkeypatch.setenv(variable, "true")
    server.add(stream_reply("gemini", [("text", "ok")]))
    async for _ in make_model("gemini", server.url).stream(REQUEST):
        pass
    server.assert_done()  # the reply's path check: /v1beta/models/...:streamGenerateContent
    assert server.requests[0].headers["x-goog-api-key"] == "g-key"


async def test_a_placeholder_key_is_not_redacted_out_of_words(server: ReplayServer) -> None:
    model = make_model("openai", server.url)
    model.credential = OpenAICredential(api_key="k", base_url=server.url + "/v1")
    server.add(error_reply("openai", 401, "Incorrect API key provided."))
    with pytest.raises(ModelAuthenticationError) as caught:
        async for _ in model.stream(REQUEST):
            pass
    assert "Incorrect API key provided." in str(caught.value)
