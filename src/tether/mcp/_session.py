"""A stateful MCP session owned by one dedicated task.

The SDK's transports and sessions are anyio context managers with task groups: the
task that enters them must be the one that exits them, and a transport failure
cancels the task that entered it. So one background task enters the session, keeps
it open, and closes it; every caller only sends requests through it. A caller's
timeout or cancellation therefore never tears down the session, and a dying server
only ends the owner task (its waiting callers get `CONNECTION_CLOSED`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from tether.errors import MCPError
from tether.mcp._config import MCPConfig
from tether.mcp._hooks import Hooks
from tether.mcp._transport import MessageHandler, describe, open_client

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["OwnedSession", "SessionClosedError"]

logger = logging.getLogger("tether.mcp")
_LISTEN_ACK_TIMEOUT = 5.0


class SessionClosedError(MCPError):
    """The session was closed (by `close()`) before or while a request ran."""

    def __init__(self, name: str) -> None:
        super().__init__(f"MCP client {name!r} was closed")


class OwnedSession:
    """One live session in a background task; `client` is usable until `dropped` is set."""

    def __init__(
        self,
        name: str,
        config: MCPConfig,
        handler: MessageHandler,
        on_tools_changed: Callable[[], None],
        hooks: Hooks | None = None,
    ) -> None:
        self.name = name
        self.dropped = asyncio.Event()
        self.client: Client | None = None
        self._config = config
        self._handler = handler
        self._on_tools_changed = on_tools_changed
        self._hooks = hooks
        self._stop = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self.loop = asyncio.get_running_loop()

    @property
    def is_alive(self) -> bool:
        """The session is open and its stream has not ended."""
        return self.client is not None and not self.dropped.is_set() and not self._stop.is_set()

    @property
    def is_closing(self) -> bool:
        """`close()` was called (a request failing now failed because of it)."""
        return self._stop.is_set()

    async def start(self) -> None:
        """Connect in the owner task.

        Raises `MCPConnectionError` if that fails. If it fails, or the caller is
        cancelled (e.g. by its `asyncio.timeout`), the owner task is stopped and the
        server process is gone before this returns.
        """
        ready: asyncio.Future[None] = self.loop.create_future()
        self._task = asyncio.create_task(self._own(ready), name=f"mcp-session-{self.name}")
        try:
            await asyncio.shield(ready)
        except BaseException:
            await self._abort()
            if ready.done() and not ready.cancelled():
                ready.exception()  # retrieved: the caller gets its own error
            raise

    async def close(self) -> None:
        """Ask the owner task to exit the session (or stop connecting) and wait for it."""
        self._stop.set()
        if self.client is None:  # still connecting: the owner is not listening for stop
            await self._abort()
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})

    async def _abort(self) -> None:
        """Cancel the owner task and wait until the SDK has stopped the server."""
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        # The SDK's transport shutdown is shielded and bounded; a second cancellation
        # of ours leaves the owner task to finish it in the background.
        await asyncio.wait({task})

    async def _own(self, ready: asyncio.Future[None]) -> None:
        try:
            async with open_client(
                self.name, self._config, self._handler, self.dropped, self._hooks
            ) as client:
                self.client = client
                listener = await self._start_listening(client)
                ready.set_result(None)
                await _first(self._stop.wait(), self.dropped.wait())
                if listener is not None:
                    listener.cancel()
                    with contextlib.suppress(BaseException):
                        await listener
        except BaseException as exc:
            if not ready.done():
                if isinstance(exc, Exception):
                    ready.set_exception(exc)
                elif self._stop.is_set():  # `close()` while connecting
                    ready.set_exception(SessionClosedError(self.name))
                else:
                    ready.cancel()
            elif isinstance(exc, Exception) and not self._stop.is_set():
                logger.warning("MCP server %r: session ended: %s", self.name, describe(exc))
            if not isinstance(exc, Exception):
                raise
        finally:
            self.client = None
            self.dropped.set()

    async def _start_listening(self, client: Client) -> asyncio.Task[None] | None:
        """On 2026-era servers, list changes come over a `subscriptions/listen` stream.

        Waits (briefly) for the server to acknowledge it, so no change is missed.
        """
        from mcp_types.version import MODERN_PROTOCOL_VERSIONS

        tools = client.server_capabilities.tools
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS or not (
            tools is not None and tools.list_changed
        ):
            return None

        acked = asyncio.Event()

        async def listen() -> None:
            try:
                async with client.listen(tools_list_changed=True) as subscription:
                    acked.set()
                    async for _event in subscription:
                        self._on_tools_changed()
            except Exception as exc:  # the tool list simply stays cached
                logger.info("MCP server %r: no list-change stream: %s", self.name, describe(exc))
            finally:
                acked.set()

        task = asyncio.create_task(listen(), name=f"mcp-listen-{self.name}")
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(_LISTEN_ACK_TIMEOUT):
                await acked.wait()
        return task


async def _first(*waits: Awaitable[Any]) -> None:
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
