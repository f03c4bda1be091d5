"""Each user's OAuth login to the agent's MCP servers, through the service.

- `GET /v1/sessions/{id}/mcp-servers`: the agent's MCP servers, which need the user's own
  login and whether the user has one.
- `POST /v1/sessions/{id}/mcp-servers/{name}/login`: starts the login; answers with the
  authorization URL to open in a browser (the web UI shows it as a link), or
  `logged_in` when the saved tokens still work.
- `POST …/{name}/logout`: forgets the user's tokens.
- `GET /v1/mcp/oauth/callback`: where the authorization server sends the browser back
  (the `redirect_uri` of the server's `OAuthConfig`; no API key: the unguessable
  `state` names the login). Any worker may receive it: it stores the redirect in the
  notes and the worker running the login picks it up.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Literal
from urllib.parse import parse_qs, urlsplit

from fastapi import APIRouter, Request
from fastapi.responses import PlainTextResponse
from pydantic import BaseModel

from tether.app.server._context import service_of
from tether.app.server._mcp_users import UserClients, needs_own_login
from tether.app.storage._notes import NotesBase
from tether.errors import InvalidInputError
from tether.mcp import AuthorizeHandler, MCPClient

__all__ = ["CALLBACK_PATH", "callback_router", "router"]

CALLBACK_PATH = "/v1/mcp/oauth/callback"
"""The service's OAuth redirect route: give it as `OAuthConfig(redirect_uri=...)`."""
LOGIN_TTL = 600.0
"""Seconds a login waits for the browser to come back."""
_SCOPE = "mcp-oauth"
_FIRST_PAUSE, _MAX_PAUSE = 0.05, 0.5

router = APIRouter(prefix="/v1/sessions/{session_id}")
callback_router = APIRouter()


class MCPServerView(BaseModel):
    """One MCP server of the session's agent, as this user sees it."""

    name: str
    login: bool
    """Each user logs in to it on their own (OAuth)."""
    logged_in: bool
    """The user has tokens for it (they may still be refused) and no login of theirs runs."""


class MCPServerList(BaseModel):
    """The MCP servers of the session's agent."""

    servers: list[MCPServerView]


class MCPLogin(BaseModel):
    """A login: open `authorization_url` in a browser, or already `logged_in`."""

    status: Literal["open_url", "logged_in"]
    authorization_url: str | None = None


def _users(request: Request) -> UserClients:
    return service_of(request).runs.users


async def _shared(request: Request, session_id: str) -> tuple[str, dict[str, MCPClient]]:
    service = service_of(request)
    user = service.user(request)
    ref = await service.find(user, session_id)
    agent = service.runs.agent(ref.agent_id)
    sources = agent.toolkit.sources if agent.toolkit is not None else []
    return user, {s.name: s for s in sources if isinstance(s, MCPClient)}


@router.get("/mcp-servers", response_model=MCPServerList)
async def list_mcp_servers(session_id: str, request: Request) -> MCPServerList:
    """The agent's MCP servers: which need the user's own login, and whether they have one."""
    user, clients = await _shared(request, session_id)
    users = _users(request)
    store = users.store(user)
    views = []
    for name, client in sorted(clients.items()):
        own = needs_own_login(client)
        url = getattr(client.mcp_config, "url", "")
        saved = await store.load(url) if own else None
        views.append(
            MCPServerView(name=name, login=own, logged_in=bool(saved and "tokens" in saved))
        )
    return MCPServerList(servers=views)


def _running(user: str, client: MCPClient) -> str:
    """The note that says a login of `user` to `client`'s server runs."""
    return json.dumps(["running", user, getattr(client.mcp_config, "url", "")])


def _login_client(clients: dict[str, MCPClient], name: str) -> MCPClient:
    client = clients.get(name)
    if client is None or not needs_own_login(client):
        known = ", ".join(n for n, c in sorted(clients.items()) if needs_own_login(c)) or "none"
        raise InvalidInputError(
            f"the session's agent has no MCP server {name!r} with OAuth (with OAuth: {known})"
        )
    return client


@router.post("/mcp-servers/{name}/login", response_model=MCPLogin)
async def login_mcp_server(session_id: str, name: str, request: Request) -> MCPLogin:
    """Start the user's login to `name`: the URL to open, or `logged_in` at once."""
    user, clients = await _shared(request, session_id)
    shared = _login_client(clients, name)
    users = _users(request)
    shown: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    mine = shared.with_token_store(users.store(user))
    running = _running(user, mine)
    await users.notes.put(_SCOPE, running, "1", ttl=LOGIN_TTL + 60)

    async def log_in() -> None:
        try:
            await mine.login(_browser_step(users.notes, shown))
        finally:
            await users.notes.pop(_SCOPE, running)

    task = asyncio.ensure_future(log_in())
    users.keep(task, mine)
    either: set[asyncio.Future[Any]] = {shown, task}
    await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    if shown.done():
        return MCPLogin(status="open_url", authorization_url=shown.result())
    task.result()  # raises `MCPAuthorizationRequired` if the login failed
    return MCPLogin(status="logged_in")


@router.post("/mcp-servers/{name}/logout", status_code=204)
async def logout_mcp_server(session_id: str, name: str, request: Request) -> None:
    """Forget the user's tokens for `name`."""
    user, clients = await _shared(request, session_id)
    shared = _login_client(clients, name)
    users = _users(request)
    await users.client(user, shared).logout()


def _browser_step(notes: NotesBase, shown: asyncio.Future[str]) -> AuthorizeHandler:
    """The `authorize` handler of a service login: hand the URL out, wait for the callback."""

    async def authorize(url: str) -> str:
        state = parse_qs(urlsplit(url).query).get("state", [""])[0]
        if not state:
            raise InvalidInputError("the authorization URL has no `state`; cannot log in here")
        await notes.put(_SCOPE, f"wait:{state}", "1", ttl=LOGIN_TTL)
        if not shown.done():
            shown.set_result(url)
        try:
            return await _landed(notes, state)
        finally:
            await notes.pop(_SCOPE, f"wait:{state}")

    return authorize


async def _landed(notes: NotesBase, state: str) -> str:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + LOGIN_TTL
    pause = _FIRST_PAUSE
    while True:
        landed = await notes.pop(_SCOPE, f"landed:{state}")
        if landed is not None:
            return landed
        if loop.time() > deadline:
            raise TimeoutError("the browser did not come back within the login's time")
        await asyncio.sleep(pause)
        pause = min(pause * 2, _MAX_PAUSE)


@callback_router.get(CALLBACK_PATH, response_class=PlainTextResponse)
async def oauth_callback(request: Request) -> PlainTextResponse:
    """The browser's way back from the authorization server (hands the code to the login)."""
    users = _users(request)
    state = request.query_params.get("state", "")
    if not state or await users.notes.get(_SCOPE, f"wait:{state}") is None:
        # A typed error like every other route's (the browser shows its JSON).
        raise InvalidInputError(
            "no login waits for this page (it timed out or was completed); start the login again"
        )
    await users.notes.put(_SCOPE, f"landed:{state}", str(request.url), ttl=LOGIN_TTL)
    return PlainTextResponse("tether: login received, you can close this tab.")
