"""The web UI's MCP login link: a server that needs the user's OAuth login shows a
"Log in" button; the login page opens from a link, the service's callback completes it,
and the agent then uses the server (a real local authorization server)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from webui import UI, Server, conversation, open_chat, send

from _oauth_browser import PUBLIC, follow_login
from _ports import reporting_server

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None

OAUTH_SERVER = Path(__file__).resolve().parents[2] / "mcp" / "servers" / "oauth_server.py"


@pytest.fixture
def locked(tmp_path: Path) -> Iterator[str]:
    with reporting_server(OAUTH_SERVER) as (_, port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def login_server(tmp_path: Path, browser: Any, locked: str) -> Iterator[Server]:
    srv = Server(tmp_path, f"sqlite:///{tmp_path / 'sessions.db'}")
    srv.args = ["--agents", "mcp_login_agents:make_agents"]
    srv.extra_env = {"TETHER_TEST_OAUTH_MCP": locked, "TETHER_TEST_SERVICE": PUBLIC}
    srv.start()
    yield srv
    srv.stop()


def test_the_login_link_logs_the_user_in(login_server: Server, ui: UI) -> None:
    page = open_chat(ui, login_server)
    logins = page.get_by_role("region", name="MCP logins")
    expect(logins).to_contain_text("locked needs you to log in")
    logins.get_by_role("button", name="Log in to locked").click()
    link = logins.get_by_role("link", name="Open the login page of locked")
    expect(link).to_have_attribute("target", "_blank")
    href = link.get_attribute("href")
    assert href is not None
    landed = follow_login(href, login_server.url)  # the browser's tab
    assert landed.status_code == 200 and "login received" in landed.text
    expect(logins).to_be_hidden(timeout=20_000)  # the panel looked again: logged in
    send(page, "who am I?")
    page.get_by_role("button", name="Allow once", exact=True).click()
    expect(conversation(page)).to_contain_text("Done.")
    expect(conversation(page)).to_contain_text("a logged-in client")
