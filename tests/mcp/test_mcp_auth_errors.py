"""A server that wants a login is reported as `MCPAuthorizationRequired`, never
"unreachable", and tether does not fall back to legacy SSE for it; token stores."""

from __future__ import annotations

import stat
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tether.errors import MCPAuthorizationRequired, MCPConnectionError
from tether.mcp import FileTokenStore, HttpMCPConfig, MCPClient, MemoryTokenStore, OAuthConfig


class _Locked(BaseHTTPRequestHandler):
    seen: list[str] = []

    def _deny(self) -> None:
        self.seen.append(f"{self.command} {self.path}")
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="mcp"')
        self.send_header("Content-Length", "0")
        self.end_headers()

    do_GET = do_POST = do_DELETE = _deny

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def locked_url() -> Iterator[str]:
    _Locked.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Locked)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


async def test_a_401_names_the_server_and_the_fix(locked_url: str) -> None:
    config = HttpMCPConfig(url=locked_url, headers={"Authorization": "Bearer sekrit-token-1"})
    with pytest.raises(MCPAuthorizationRequired) as caught:
        await MCPClient("tracker", True, config).connect()
    assert caught.value.server == "tracker"
    text = str(caught.value)
    assert "'tracker'" in text and "/mcp login tracker" in text and "OAuthConfig" in text
    assert "sekrit-token-1" not in text and "could not be reached" not in text
    assert isinstance(caught.value, MCPConnectionError)  # `is_optional` still covers it
    assert not any("/sse" in line for line in _Locked.seen)  # no pointless SSE fallback


async def test_a_failed_login_is_typed_too(locked_url: str) -> None:
    config = HttpMCPConfig(url=locked_url, auth=OAuthConfig())
    with pytest.raises(MCPAuthorizationRequired, match="OAuth login failed"):
        await MCPClient("tracker", True, config).connect()


async def test_an_optional_locked_server_offers_no_tools(locked_url: str) -> None:
    client = MCPClient("tracker", True, HttpMCPConfig(url=locked_url), is_optional=True)
    assert await client.list_tools(None) == []
    assert "requires authorization" in (client.unavailable_hint("mcp__tracker__x", None) or "")


async def test_file_token_store(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens")
    url = "https://example.com/mcp"
    assert await store.load(url) is None
    await store.save(url, {"tokens": {"access_token": "abc"}})
    path = store.path_for(url)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert await store.load(url) == {"tokens": {"access_token": "abc"}}
    assert url.encode() not in path.name.encode()
    await store.delete(url)
    assert await store.load(url) is None
    await store.delete(url)  # no error when nothing is stored


async def test_file_token_store_default_folder_and_bad_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_HOME", str(tmp_path))
    store = FileTokenStore()
    assert store.folder == tmp_path / "mcp-tokens"
    store.folder.mkdir()
    store.path_for("u").write_text("not json")
    assert await store.load("u") is None


async def test_memory_token_store_copies() -> None:
    store = MemoryTokenStore()
    data = {"tokens": {"access_token": "abc"}}
    await store.save("u", data)
    data["tokens"] = {}
    assert await store.load("u") == {"tokens": {"access_token": "abc"}}


def test_oauth_config_checks_client_credentials() -> None:
    with pytest.raises(ValueError, match="client_id"):
        OAuthConfig(grant="client_credentials", client_secret="s")
    with pytest.raises(ValueError, match="exactly one"):
        OAuthConfig(grant="client_credentials", client_id="c")
    with pytest.raises(ValueError, match="issuer"):
        OAuthConfig(grant="identity_assertion", client_id="c", client_secret="s")
    with pytest.raises(ValueError, match="redirect_uri"):
        OAuthConfig(redirect_uri="ftp://x")
    assert "s3cret" not in repr(OAuthConfig(client_id="c", client_secret="s3cret"))
