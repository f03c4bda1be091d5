"""`MCPClient`: an MCP server as a source of tools for a `Toolkit`."""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from tether.errors import ConfigError, MCPConnectionError
from tether.event import AgentEvent, CustomEvent
from tether.mcp._config import HttpMCPConfig, MCPConfig, StdioMCPConfig
from tether.mcp._session import OwnedSession
from tether.mcp._tool import MCPTool, convert_result, tool_name
from tether.mcp._tool import tool_name as _mcp_name
from tether.mcp._transport import describe, open_client
from tether.message import ToolResultBlock, ToolResultState
from tether.tool import ToolBase, ToolContext, ToolOutput, ToolSourceBase

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["MCPClient"]

logger = logging.getLogger("tether.mcp")
_NAME = re.compile(r"[A-Za-z0-9_-]+")
_STDIO_CONNECT_TIMEOUT = 30.0
T = TypeVar("T")


class _ConnectionLost(Exception):
    """The session ended while a call was in flight."""


class MCPClient(ToolSourceBase):
    """Tools of one MCP server, named `mcp__<name>__<tool>`.

    The server is reached on first use. A stateful client keeps one session (owned by a
    background task) until `aclose()`; it reconnects once when the session has dropped.
    A stateless client opens a session per operation. The tool list is cached: a
    stateful client refreshes it when the server announces a change, a stateless one
    once per reply.

    Args:
        name: Short server name used in tool names and messages (letters, digits, `_-`).
        is_stateful: Keep one session open (True) or open one per operation (False).
        mcp_config: How to reach the server (`StdioMCPConfig` or `HttpMCPConfig`).
        enable_tools: Only offer these tools (server-side names); all if None.
        disable_tools: Never offer these tools (server-side names).
        execution_timeout: Seconds a tool call may take before it fails (None: no limit).
        is_optional: If the server can't be reached, log a warning and offer no tools
            (retrying next reply) instead of raising `MCPConnectionError`.
    """

    def __init__(
        self,
        name: str,
        is_stateful: bool,
        mcp_config: MCPConfig,
        enable_tools: Iterable[str] | None = None,
        disable_tools: Iterable[str] | None = None,
        execution_timeout: float | None = None,
        *,
        is_optional: bool = False,
    ) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigError(
                f"MCP server name {name!r} must be letters, digits, `_` or `-` (it becomes "
                "part of tool names `mcp__<name>__<tool>`)"
            )
        if not isinstance(mcp_config, StdioMCPConfig | HttpMCPConfig):
            raise ConfigError(
                f"`mcp_config` must be a `StdioMCPConfig` or `HttpMCPConfig`, got {mcp_config!r}"
            )
        if execution_timeout is not None and execution_timeout <= 0:
            raise ConfigError(f"`execution_timeout` must be positive, got {execution_timeout!r}")
        self.name = name
        self.is_stateful = bool(is_stateful)
        self.mcp_config = mcp_config
        self.enable_tools = None if enable_tools is None else frozenset(enable_tools)
        self.disable_tools = frozenset(disable_tools or ())
        self.execution_timeout = execution_timeout
        self.is_optional = is_optional
        self.list_requests = 0
        """How many `tools/list` round trips this client has made."""
        self._tools: list[MCPTool] | None = None
        self._specs: list[Any] = []
        self._server_tools: set[str] = set()
        self._stale = False
        self._unavailable: str | None = None
        self._session: OwnedSession | None = None
        self._lock: tuple[asyncio.AbstractEventLoop, asyncio.Lock] | None = None

    # -- connection -------------------------------------------------------------------

    @property
    def is_connected(self) -> bool:
        """A stateful session is open (always False for stateless clients)."""
        return self._session is not None and self._session.is_alive

    async def connect(self) -> None:
        """Reach the server now and list its tools (raises `MCPConnectionError`)."""
        self._stale = True
        self._unavailable = None
        await self._refresh()

    async def aclose(self) -> None:
        """Close the stateful session (stops a stdio server process)."""
        session, self._session = self._session, None
        if session is not None and session.loop is asyncio.get_running_loop():
            await session.close()

    async def __aenter__(self) -> MCPClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _connect_timeout(self) -> float:
        if isinstance(self.mcp_config, HttpMCPConfig):
            return self.mcp_config.timeout
        return _STDIO_CONNECT_TIMEOUT

    def _get_lock(self) -> asyncio.Lock:
        loop = asyncio.get_running_loop()
        if self._lock is None or self._lock[0] is not loop:
            self._lock = (loop, asyncio.Lock())
        return self._lock[1]

    async def _live_session(self) -> OwnedSession:
        async with self._get_lock():
            session = self._session
            if session is not None and session.is_alive:
                if session.loop is asyncio.get_running_loop():
                    return session
            if session is not None and session.loop is asyncio.get_running_loop():
                await session.close()
                self._stale = True  # the server may offer other tools after a restart
            session = OwnedSession(self.name, self.mcp_config, self._on_message, self._mark_stale)
            try:
                async with asyncio.timeout(self._connect_timeout()):
                    await session.start()
            except TimeoutError:
                await session.close()
                raise MCPConnectionError(
                    f"MCP server {self.name!r} did not complete the handshake within "
                    f"{self._connect_timeout()}s; check that the command or URL starts an MCP server"
                ) from None
            self._session = session
            return session

    async def _with_client(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        """Run `operation` on a session: the stateful one, or a fresh one."""
        if not self.is_stateful:
            async with open_client(self.name, self.mcp_config, self._on_message) as client:
                return await operation(client)
        session = await self._live_session()
        live = session.client
        assert live is not None
        try:
            return await operation(live)
        except Exception as exc:
            if session.dropped.is_set():
                raise _ConnectionLost(describe(exc)) from exc
            raise

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._mark_stale()

    def _mark_stale(self) -> None:
        self._stale = True

    # -- tools ------------------------------------------------------------------------

    async def list_tools(self, state: Any) -> list[ToolBase]:
        """The server's tools (cached; listed again only when they changed)."""
        if self._tools is not None and not self._stale:
            return list(self._tools)
        if self._unavailable is not None:
            return []
        try:
            await self._refresh()
        except MCPConnectionError as exc:
            if not self.is_optional:
                raise
            self._unavailable = str(exc)
            logger.warning("%s; continuing without its tools", exc)
            return []
        return list(self._tools or ())

    async def _refresh(self) -> None:
        self._stale = False  # a change announced while listing marks it stale again
        try:
            async with asyncio.timeout(self._connect_timeout()):
                try:
                    specs = await self._with_client(self._list_all)
                except _ConnectionLost:  # a dropped session: reconnect once
                    specs = await self._with_client(self._list_all)
        except TimeoutError:
            raise MCPConnectionError(
                f"MCP server {self.name!r} did not list its tools within {self._connect_timeout()}s"
            ) from None
        except (MCPConnectionError, _ConnectionLost) as exc:
            raise MCPConnectionError(f"MCP server {self.name!r}: {exc}") from exc
        except Exception as exc:
            raise MCPConnectionError(
                f"MCP server {self.name!r} failed to list its tools ({describe(exc)})"
            ) from exc
        self._specs = specs
        self._server_tools = {spec.name for spec in specs}
        self._tools = [
            MCPTool(self.name, spec, self._call) for spec in specs if self._is_enabled(spec.name)
        ]
        missing = (self.enable_tools or frozenset()) - self._server_tools
        if missing:
            logger.warning(
                "MCP server %r has no tools named %s (from `enable_tools`)",
                self.name,
                ", ".join(sorted(missing)),
            )

    async def _list_all(self, client: Client) -> list[Any]:
        specs: list[Any] = []
        cursor: str | None = None
        while True:
            page = await client.list_tools(cursor=cursor)
            self.list_requests += 1
            specs.extend(page.tools)
            cursor = page.next_cursor
            if not cursor:
                return specs

    def _prime(self, client: Client) -> None:
        """Give a fresh session the listing we hold, so the SDK does not list again.

        (It lists before validating a result's structured content, and reads
        `x-mcp-header` annotations from the listing.) Uses a private SDK hook if present.
        """
        absorb = getattr(client.session, "_absorb_tool_listing", None)
        if absorb is None or not self._specs:
            return
        from mcp_types import ListToolsResult

        try:
            absorb(ListToolsResult(tools=list(self._specs)), complete=True)
        except Exception:  # an optimisation only
            logger.debug("could not prime the MCP session with the tool list", exc_info=True)

    def _is_enabled(self, remote: str) -> bool:
        if self.enable_tools is not None and remote not in self.enable_tools:
            return False
        return remote not in self.disable_tools

    def unavailable_hint(self, tool_name: str, state: Any) -> str | None:
        """Explain calls to this server's tools that are not callable now."""
        prefix = f"mcp__{self.name}__"
        if not tool_name.startswith(prefix):
            return None
        if self._unavailable is not None:
            return (
                f"Error: MCP server {self.name!r} is unavailable, so {tool_name!r} cannot be "
                f"called now ({self._unavailable}). Continue without it."
            )
        disabled = [t for t in self._server_tools if tool_name == _mcp_name(self.name, t)]
        if disabled:
            return f"Error: tool {tool_name!r} is disabled in this toolkit; do not call it."
        return None

    async def on_reply_end(self, state: Any, reply_id: str) -> list[AgentEvent]:
        """A stateless client lists again next reply; an unavailable server is retried."""
        if not self.is_stateful:
            self._stale = True
        self._unavailable = None
        return []

    # -- calls ------------------------------------------------------------------------

    async def _call(
        self, remote: str, arguments: dict[str, Any], context: ToolContext
    ) -> ToolOutput:
        progress = self._progress_callback(remote, context)
        shown = tool_name(self.name, remote)

        async def operation(client: Client) -> Any:
            if not self.is_stateful:
                self._prime(client)
            return await client.call_tool(remote, arguments, progress_callback=progress)

        try:
            async with asyncio.timeout(self.execution_timeout):
                result = await self._with_client(operation)
        except TimeoutError:
            return _error(
                f"Error: {shown} did not finish within {self.execution_timeout}s "
                "(the MCP client's `execution_timeout`); it was cancelled. Try smaller input "
                "or another approach."
            )
        except _ConnectionLost as exc:
            return _error(
                f"Error: the connection to MCP server {self.name!r} was lost during the call "
                f"({exc}); the call may or may not have taken effect. The next call reconnects."
            )
        except MCPConnectionError as exc:
            return _error(f"Error: {exc}")
        except Exception as exc:
            return _error(f"Error: calling {shown} failed: {describe(exc)}")
        return convert_result(result)

    def _progress_callback(self, remote: str, context: ToolContext) -> Any:
        emit = context.emit
        if emit is None:
            return None

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            data = {
                "server": self.name,
                "tool": tool_name(self.name, remote),
                "tool_call_id": context.tool_call_id,
                "progress": progress,
                "total": total,
                "message": message,
            }
            try:
                await emit(CustomEvent(reply_id=context.reply_id, name="mcp_progress", data=data))
            except Exception:  # progress is best effort; never fail the call for it
                logger.debug("could not emit MCP progress", exc_info=True)

        return on_progress

    def as_plugin(
        self,
        module_name: str | None = None,
        description: str | None = None,
        sleep_brief: str | None = None,
        **kwargs: Any,
    ) -> Any:
        """This server as a sleepable plugin: its tools stay hidden until the model wakes it.

        While asleep the server is not even contacted. Add the plugin to
        `Toolkit(plugins=[...])` instead of `mcps=[...]`.

        Args:
            module_name: The id the model activates it by (default: the server name).
            description: What the server offers (default: a generic line).
            sleep_brief: The line shown while it sleeps (default: `description`).
            **kwargs: Passed on to `tether.plugin.Plugin.from_source`.
        """
        from tether.plugin import Plugin  # plugins sit above mcp/

        text = description or f"Tools of the MCP server {self.name!r}."
        kwargs.setdefault("tool_prefix", f"mcp__{self.name}__")
        return Plugin.from_source(
            self,
            module_name=module_name or self.name,
            description=text,
            sleep_brief=text if sleep_brief is None else sleep_brief,
            **kwargs,
        )

    def __repr__(self) -> str:
        kind = "stateful" if self.is_stateful else "stateless"
        return f"<MCPClient {self.name!r} {kind}>"


def _error(text: str) -> ToolResultBlock:
    return ToolResultBlock(id="", name="", output=text, state=ToolResultState.ERROR)
