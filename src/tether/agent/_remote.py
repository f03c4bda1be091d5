"""`A2AAgent`: a remote agent spoken to over A2A, usable wherever a sub-agent is."""

from __future__ import annotations

import contextlib
import re
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from pydantic import BaseModel

from tether.agent._remote_sdk import connected
from tether.agent._remote_tool import A2ATool
from tether.credential import CredentialBase
from tether.errors import ConfigError

if TYPE_CHECKING:
    from a2a.client import Client
    from a2a.types import AgentCard

__all__ = ["A2AAgent"]

_NAME = re.compile(r"[^A-Za-z0-9_-]+")


class A2AAgent:
    """A remote agent at `url` (its agent card at `<url>/.well-known/agent-card.json`).

    `as_tool()` makes it a tool of a local agent: the task goes to the remote agent as an
    A2A message, its updates stream inside the parent's events, its questions
    (`input-required`) pause the parent, and its answer is the tool's result. Needs the
    `a2a` extra (`pip install 'tether[a2a]'`).

    Args:
        url: The agent's base URL (where its agent card is served).
        name: The name the parent's model calls it by; by default the URL's last path
            segment or host.
        description: What it does, for the parent's model.
        credential: An API key sent as `Authorization: Bearer <key>` (e.g.
            `A2ACredential(api_key=...)`; a `tether serve` key works as it is).
        headers: Other HTTP headers to send with every request (they win over
            `credential`'s).
        timeout: Seconds to wait for the agent to answer a request (or the next update).
    """

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        description: str = "",
        credential: CredentialBase | None = None,
        headers: Mapping[str, str] | None = None,
        timeout: float = 300.0,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ConfigError(f"A2AAgent needs an http(s) URL, got {url!r}")
        self.url = url.rstrip("/")
        self.name = name or _name_of(url)
        self.description = description
        self._headers = dict(headers or {})
        self._credential = credential
        self.timeout = timeout
        self._card: AgentCard | None = None

    def headers(self) -> dict[str, str]:
        """The headers sent with each request (the credential's key included)."""
        out: dict[str, str] = {}
        key = self._credential.get_api_key() if self._credential is not None else None
        if key:
            out["Authorization"] = f"Bearer {key}"
        out.update(self._headers)
        return out

    async def card(self) -> AgentCard:
        """The agent's card (fetched once). Raises `A2AConnectionError`, `A2AAuthenticationError`."""
        async with self.connected() as _:
            assert self._card is not None
            return self._card

    @contextlib.asynccontextmanager
    async def connected(self) -> AsyncIterator[Client]:
        """An `a2a-sdk` client for the agent, closed after the block."""
        async with connected(self.url, self.headers(), self.timeout, self._card) as (client, card):
            self._card = card
            yield client

    def as_tool(
        self,
        name: str | None = None,
        description: str | None = None,
        *,
        input_model: type[BaseModel] | None = None,
        read_only: bool = False,
        concurrency_safe: bool = True,
    ) -> A2ATool:
        """A tool that hands the model's task to this remote agent.

        Args:
            name: The tool's name (default: the agent's `name`).
            description: The tool's description for the model.
            input_model: The tool's arguments (default: one `task` string); another model
                is sent as its JSON.
            read_only: Whether calling it changes nothing the parent's permissions guard
                (what it does remotely is unknown here, so by default it is not: outside
                `bypass` the parent's user confirms each call).
            concurrency_safe: Whether calls may run at the same time as other safe calls.
        """
        return A2ATool(
            self,
            name=name,
            description=description,
            input_model=input_model,
            read_only=read_only,
            concurrency_safe=concurrency_safe,
        )

    def __repr__(self) -> str:
        return f"A2AAgent({self.url!r}, name={self.name!r})"


def _name_of(url: str) -> str:
    parts = urlsplit(url)
    segments = [s for s in parts.path.split("/") if s]
    raw = segments[-1] if segments else (parts.hostname or "remote")
    return _NAME.sub("_", raw).strip("_") or "remote"
