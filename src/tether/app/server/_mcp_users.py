"""Each user's own clients of the OAuth MCP servers an agent uses, over the user's tokens.

An `MCPClient` whose `HttpMCPConfig` has `auth` holds one login; a service with several
users gives each user a copy (`MCPClient.with_token_store`) whose tokens live in the
service's notes under the user's id (`NotesTokenStore`): never in `AgentState`, events or
logs. Other MCP clients stay shared.
"""

from __future__ import annotations

import asyncio
import json
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

from tether.app.storage._notes import NotesBase
from tether.mcp import HttpMCPConfig, MCPClient, TokenStoreBase
from tether.tool import Toolkit

if TYPE_CHECKING:
    from tether.agent import Agent

__all__ = ["NotesTokenStore", "UserClients", "needs_own_login"]


class NotesTokenStore(TokenStoreBase):
    """One user's OAuth data per MCP server URL, in the service's notes."""

    def __init__(self, notes: NotesBase, user_id: str) -> None:
        self.notes = notes
        self.scope = json.dumps(["mcp-tokens", user_id])

    async def load(self, server_url: str) -> dict[str, Any] | None:
        """The user's data for `server_url`, or None."""
        raw = await self.notes.get(self.scope, server_url)
        data = None if raw is None else json.loads(raw)
        return data if isinstance(data, dict) else None

    async def save(self, server_url: str, data: dict[str, Any]) -> None:
        """Replace the user's data for `server_url`."""
        await self.notes.put(self.scope, server_url, json.dumps(data))

    async def delete(self, server_url: str) -> None:
        """Forget the user's data for `server_url` (log out)."""
        await self.notes.pop(self.scope, server_url)


def needs_own_login(source: object) -> bool:
    """Whether `source` is an MCP client with OAuth (each user logs in on their own)."""
    return (
        isinstance(source, MCPClient)
        and isinstance(source.mcp_config, HttpMCPConfig)
        and source.mcp_config.auth is not None
    )


class UserClients:
    """The per-user copies of the agents' OAuth MCP clients (the most recent `size` kept)."""

    def __init__(self, notes: NotesBase, size: int = 256) -> None:
        self.notes = notes
        self.size = size
        self._clients: OrderedDict[tuple[str, int], MCPClient] = OrderedDict()
        self._closing: set[asyncio.Future[None]] = set()
        self._logins: set[asyncio.Future[None]] = set()

    def store(self, user_id: str) -> NotesTokenStore:
        """Where `user_id`'s tokens live."""
        return NotesTokenStore(self.notes, user_id)

    def client(self, user_id: str, shared: MCPClient) -> MCPClient:
        """`user_id`'s copy of `shared` (a new one if the last could not log in)."""
        key = (user_id, id(shared))
        mine = self._clients.get(key)
        if mine is None or mine.status == "needs login":
            mine = shared.with_token_store(self.store(user_id))
            self._clients[key] = mine
        self._clients.move_to_end(key)
        while len(self._clients) > self.size:
            _, old = self._clients.popitem(last=False)
            self._close_later(old)
        return mine

    def keep(self, login: asyncio.Future[None], client: MCPClient) -> None:
        """Hold a login running in the background on `client`; close it once it ends.

        Its tokens stay in the store: the user's copy that needed a login is replaced by
        a new one at its next use (`client`), which finds them.
        """

        def done(task: asyncio.Future[None]) -> None:
            self._logins.discard(task)
            if not task.cancelled():
                task.exception()  # retrieved: the route that started it reports it
            self._close_later(client)

        self._logins.add(login)
        login.add_done_callback(done)

    def _close_later(self, client: MCPClient) -> None:
        closing = asyncio.ensure_future(client.aclose())
        self._closing.add(closing)
        closing.add_done_callback(self._closing.discard)

    async def close(self) -> None:
        """Close every copy (the service stops)."""
        clients, self._clients = list(self._clients.values()), OrderedDict()
        for client in clients:
            await client.aclose()
        for login in list(self._logins):
            login.cancel()
        await asyncio.gather(*self._logins, *self._closing, return_exceptions=True)

    def agent_for(self, user_id: str, agent: Agent) -> Agent:
        """`agent` (a copy the caller owns) with `user_id`'s copies of its OAuth clients."""
        mine = self.toolkit(user_id, agent)
        if mine is not None:
            agent.toolkit = mine
        return agent

    def toolkit(self, user_id: str, agent: Agent) -> Toolkit | None:
        """The agent's toolkit with `user_id`'s copies of its OAuth clients (None: none)."""
        toolkit = agent.toolkit
        if toolkit is None or not any(needs_own_login(s) for s in toolkit.sources):
            return None
        return toolkit.with_sources_mapped(
            lambda s: self.client(user_id, s) if needs_own_login(s) else s  # type: ignore[arg-type]
        )
