"""Resources attached to the context, read again when their server says they changed.

Their text goes into every model request; a server's `resources/updated` for one makes
the next request read it again. On 2026-era connections the client listens for the URI on a `subscriptions/listen`
stream; on 2025-era ones it sends `resources/subscribe` and the notification arrives with
the other messages. A server that cannot announce changes still has the text read once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from tether.mcp._transport import deprecated_ok, describe
from tether.tool import PromptParts

if TYPE_CHECKING:
    from mcp import Client

    from tether.state import AgentState

__all__ = ["ResourceAttachments"]

logger = logging.getLogger("tether.mcp")
T = TypeVar("T")
_ACK_TIMEOUT = 5.0


class ResourceAttachments:
    """`attach_resource` and friends, as methods of `MCPClient`."""

    name: str
    _attached: dict[str, str]
    _changed: set[str]
    _watchers: dict[str, asyncio.Task[None]]

    async def _with_client(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        raise NotImplementedError  # `MCPClient` provides it

    async def read_resource(self, uri: str) -> list[dict[str, Any]]:
        raise NotImplementedError  # `MCPFeatures` provides it

    def _init_attachments(self) -> None:
        self._attached, self._changed, self._watchers = {}, set(), {}

    @property
    def attached_resources(self) -> dict[str, str]:
        """The attached resources' text, by URI (as the next model request sees it)."""
        return dict(self._attached)

    @property
    def changed_resources(self) -> frozenset[str]:
        """Attached URIs the server said changed; the next model request reads them again."""
        return frozenset(self._changed)

    async def attach_resource(self, uri: str) -> str:
        """Read `uri`, put its text into every model request, and follow its changes."""
        self._attached[uri] = await self._text_of(uri)
        if uri not in self._watchers:
            await self._with_client(lambda client: self._watch(client, uri))
        return self._attached[uri]

    def detach_resource(self, uri: str) -> None:
        """Stop putting `uri` into model requests (and stop following it)."""
        self._attached.pop(uri, None)
        self._changed.discard(uri)
        watcher = self._watchers.pop(uri, None)
        if watcher is not None:
            watcher.cancel()

    def resource_updated(self, uri: str) -> None:
        """The server says `uri` changed: read it again before the next model request."""
        if uri in self._attached:
            self._changed.add(uri)

    async def prompt(self, state: AgentState) -> PromptParts | None:
        """The attached resources, as `<resource>` blocks (changed ones read again first)."""
        for uri in sorted(self._changed & set(self._attached)):
            self._changed.discard(uri)
            try:
                self._attached[uri] = await self._text_of(uri)
            except Exception as exc:  # keep the last text; say so in the log
                logger.warning("MCP server %r: could not read %s again: %s", self.name, uri, exc)
        if not self._attached:
            return None
        blocks = [
            f'<resource server="{self.name}" uri="{uri}">\n{text}\n</resource>'
            for uri, text in sorted(self._attached.items())
        ]
        return PromptParts(dynamic="Attached MCP resources:\n" + "\n\n".join(blocks))

    async def _text_of(self, uri: str) -> str:
        contents = await self.read_resource(uri)
        return "\n".join(str(c["text"]) for c in contents if isinstance(c.get("text"), str))

    async def _watch(self, client: Client, uri: str) -> None:
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            with contextlib.suppress(Exception), deprecated_ok():
                await client.subscribe_resource(uri)
            return
        acked = asyncio.Event()

        async def listen() -> None:
            try:
                async with client.listen(resource_subscriptions=[uri]) as subscription:
                    acked.set()
                    async for event in subscription:
                        self.resource_updated(str(getattr(event, "uri", uri)))
            except Exception as exc:  # the text stays as last read
                logger.info("MCP server %r: cannot follow %s: %s", self.name, uri, describe(exc))
            finally:
                acked.set()
                self._watchers.pop(uri, None)

        self._watchers[uri] = asyncio.create_task(listen(), name=f"mcp-resource-{self.name}")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_ACK_TIMEOUT):
                await acked.wait()
