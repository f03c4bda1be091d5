"""`MCPClient`: an MCP server as a source of tools for a `Toolkit`."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any, TypeVar

from tether.errors import ConfigError, MCPConnectionError, MCPError
from tether.event import AgentEvent
from tether.mcp._asking import cancel_requests_of
from tether.mcp._attached import ResourceAttachments
from tether.mcp._config import HttpMCPConfig, MCPConfig, StdioMCPConfig
from tether.mcp._features import LogLevel, MCPFeatures
from tether.mcp._hooks import Hooks, RootsSource
from tether.mcp._oauth import AuthorizeHandler, IdentityAssertionHandler
from tether.mcp._redact import Redactor
from tether.mcp._requests import ElicitationHandler, LogHandler, SamplingHandler
from tether.mcp._resource_tools import resource_tools
from tether.mcp._session import OwnedSession, SessionClosedError
from tether.mcp._tokens import MemoryTokenStore, TokenStoreBase
from tether.mcp._tool import MCPTool, convert_result, tool_name
from tether.mcp._tool import tool_name as _tool_name
from tether.mcp._transport import describe, open_client
from tether.message import ToolResultBlock, ToolResultState
from tether.tool import ToolBase, ToolContext, ToolOutput, ToolSourceBase

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["DEFAULT_EXECUTION_TIMEOUT", "MCPClient"]

logger = logging.getLogger("tether.mcp")
_NAME = re.compile(r"[A-Za-z0-9_-]{1,40}")
T = TypeVar("T")

DEFAULT_EXECUTION_TIMEOUT = 60.0
"""Seconds a tool call may take by default: a server that never answers must not hang
the reply (a long-running tool can be given more, or None)."""


class _ConnectionLost(Exception):
    """The session ended while a call was in flight."""


class MCPClient(MCPFeatures, ResourceAttachments, ToolSourceBase):
    """Tools of one MCP server, named `mcp__<name>__<tool>`.

    The server is reached on first use. A stateful client keeps one session (owned by a
    background task) until `aclose()`, which is final; it reconnects once when the
    session has dropped.
    A stateless client opens a session per operation. The tool list is cached: a
    stateful client refreshes it when the server announces a change, a stateless one
    once per reply.

    Args:
        name: Short server name used in tool names and messages (1-40 letters, digits,
            `_-`).
        is_stateful: Keep one session open (True) or open one per operation (False).
        mcp_config: How to reach the server (`StdioMCPConfig` or `HttpMCPConfig`).
        enable_tools: Only offer these tools (server-side names); all if None.
        disable_tools: Never offer these tools (server-side names).
        execution_timeout: Seconds a tool call may take before it ends with an error
            result the model reads (default 60; None: no limit, for a server you trust to
            answer).
        is_optional: If the server can't be reached, log a warning and offer no tools
            (retrying next reply) instead of raising `MCPConnectionError`.
        trust_annotations: Let the server's annotations decide: a `readOnlyHint` tool then
            runs without asking (and in EXPLORE mode) and may run alongside other calls.
            By default annotations are the server's unverified claims (the MCP
            specification: untrusted unless the server is trusted), so every call asks
            unless a rule allows it.
        on_elicitation: Answers the server's questions to the user during a call (see
            `ElicitationRequest`); without it every elicitation is declined.
        elicitation_timeout: Seconds an elicitation may wait for its answer (then it is
            cancelled); None waits as long as the call may run.
        on_sampling: Answers the server's `sampling/createMessage` (e.g. `ModelSampler`);
            without it tether does not offer sampling.
        roots: The folders the server may work in (a list, or a callable read on each
            request); without it tether does not offer roots.
        on_log: Receives the server's log messages (they are also logged to the
            `tether.mcp.server` logger and sent as `mcp_log` events to calls in flight).
        log_level: Ask the server for log messages at this level and above.
        token_store: Where OAuth tokens are kept (default: memory, for this process).
        authorize: The interactive step of an OAuth login (see `AuthorizeHandler`);
            without it a server that needs a browser login raises
            `MCPAuthorizationRequired`.
        identity_assertion: Fetches the ID-JAG for `OAuthConfig(grant="identity_assertion")`.
        resource_tools: Also offer `mcp__<name>__list_resources` and
            `mcp__<name>__read_resource` (read-only) when the server has resources.
    """

    def __init__(
        self,
        name: str,
        is_stateful: bool,
        mcp_config: MCPConfig,
        enable_tools: Iterable[str] | None = None,
        disable_tools: Iterable[str] | None = None,
        execution_timeout: float | None = DEFAULT_EXECUTION_TIMEOUT,
        *,
        is_optional: bool = False,
        trust_annotations: bool = False,
        on_elicitation: ElicitationHandler | None = None,
        elicitation_timeout: float | None = None,
        on_sampling: SamplingHandler | None = None,
        roots: RootsSource | None = None,
        on_log: LogHandler | None = None,
        log_level: LogLevel | None = None,
        token_store: TokenStoreBase | None = None,
        authorize: AuthorizeHandler | None = None,
        resource_tools: bool = False,
        identity_assertion: IdentityAssertionHandler | None = None,
    ) -> None:
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise ConfigError(
                f"MCP server name {name!r} must be 1 to 40 letters, digits, `_` or `-` (it "
                "becomes part of tool names `mcp__<name>__<tool>`, which providers limit to "
                "64 characters)"
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
        self.trust_annotations = bool(trust_annotations)
        self.list_requests = 0
        """How many `tools/list` round trips this client has made."""
        self._tools: list[ToolBase] | None = None
        self._specs: list[Any] = []
        self._server_tools: set[str] = set()
        self._stale = False
        self._unavailable: str | None = None
        self._closed = False
        self._session: OwnedSession | None = None
        self._locks: tuple[asyncio.AbstractEventLoop, asyncio.Lock, asyncio.Lock] | None = None
        self._redact = Redactor(mcp_config)
        self.resource_tools = bool(resource_tools)
        self.token_store = token_store if token_store is not None else MemoryTokenStore()
        self._in_flight: dict[str, ToolContext] = {}
        self._has_resources = False
        self._init_attachments()
        self._hooks = Hooks(
            server=name,
            on_elicitation=on_elicitation,
            elicitation_timeout=elicitation_timeout,
            on_sampling=on_sampling,
            roots=roots,
            on_log=on_log,
            log_level=log_level,
            token_store=self.token_store,
            authorize=authorize,
            identity_assertion=identity_assertion,
            emit=self._emit_in_flight,
            current_call=self._current_call,
        )

    # -- connection -------------------------------------------------------------------

    @property
    def is_connected(self) -> bool:
        """A stateful session is open (always False for stateless clients)."""
        return self._session is not None and self._session.is_alive

    async def connect(self) -> None:
        """Reach the server now and list its tools (raises `MCPConnectionError`)."""
        self._check_open()
        self._stale = True
        self._unavailable = None
        await self._refresh()

    async def _drop_session(self) -> None:
        """Close the current session (if any); the next use connects again."""
        session, self._session = self._session, None
        self._unavailable = None
        if session is not None and session.loop is asyncio.get_running_loop():
            await session.close()

    async def aclose(self) -> None:
        """Close the client for good (stops a stdio server process).

        A call still running gets an error result; later use raises `MCPError`.
        """
        self._closed = True
        session, self._session = self._session, None
        if session is not None and session.loop is asyncio.get_running_loop():
            await session.close()

    async def __aenter__(self) -> MCPClient:
        await self.connect()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _check_open(self) -> None:
        if self._closed:
            raise MCPError(
                f"MCP client {self.name!r} is closed (`aclose()` was called, e.g. by "
                "leaving `async with Toolkit(...)`); create a new `MCPClient` to connect again"
            )

    @property
    def _timeout(self) -> float:
        """Seconds for the handshake and for each tool listing."""
        return self.mcp_config.timeout

    def _get_locks(self) -> tuple[asyncio.Lock, asyncio.Lock]:
        """The session lock and the listing lock of the running event loop."""
        loop = asyncio.get_running_loop()
        if self._locks is None or self._locks[0] is not loop:
            self._locks = (loop, asyncio.Lock(), asyncio.Lock())
        return self._locks[1], self._locks[2]

    def _handshake_timeout(self) -> MCPConnectionError:
        return MCPConnectionError(
            f"MCP server {self.name!r} did not complete the handshake within "
            f"{self._timeout}s; check that the command or URL starts an MCP server "
            "(or raise the config's `timeout`)"
        )

    async def _live_session(self) -> OwnedSession:
        async with self._get_locks()[0]:
            self._check_open()
            session = self._session
            loop = asyncio.get_running_loop()
            if session is not None and session.is_alive and session.loop is loop:
                return session
            reconnecting = session is not None and session.loop is loop
            if reconnecting and session is not None:
                await session.close()
            session = OwnedSession(
                self.name, self.mcp_config, self._on_message, self._mark_stale, self._hooks
            )
            try:
                async with asyncio.timeout(self._timeout):
                    await session.start()
            except TimeoutError:
                raise self._handshake_timeout() from None
            if self._closed:  # `aclose()` ran while we connected
                await session.close()
                raise SessionClosedError(self.name)
            if reconnecting:
                self._stale = True  # the server may offer other tools after a restart
            self._session = session
            return session

    async def _with_client(self, operation: Callable[[Client], Awaitable[T]]) -> T:
        """Run `operation` on a session: the stateful one, or a fresh one."""
        if not self.is_stateful:
            async with contextlib.AsyncExitStack() as stack:
                try:
                    async with asyncio.timeout(self._timeout):
                        client = await stack.enter_async_context(
                            open_client(
                                self.name, self.mcp_config, self._on_message, None, self._hooks
                            )
                        )
                except TimeoutError:
                    raise self._handshake_timeout() from None
                return await operation(client)
        session = await self._live_session()
        live = session.client
        if live is None:  # ended between connecting and this request
            if self._closed:
                raise SessionClosedError(self.name)
            raise _ConnectionLost("the session ended")
        try:
            return await operation(live)
        except Exception as exc:
            if session.is_closing and self._closed:
                raise SessionClosedError(self.name) from exc
            if session.dropped.is_set():
                raise _ConnectionLost(describe(exc)) from exc
            raise

    async def _on_message(self, message: Any) -> None:
        from mcp_types import ResourceUpdatedNotification, ToolListChangedNotification

        if isinstance(message, ToolListChangedNotification):
            self._mark_stale()
        elif isinstance(message, ResourceUpdatedNotification):  # 2025-era subscriptions
            self.resource_updated(str(message.params.uri))

    def _mark_stale(self) -> None:
        self._stale = True

    # -- tools ------------------------------------------------------------------------

    async def list_tools(self, state: Any) -> list[ToolBase]:
        """The server's tools (cached; listed again only when they changed).

        A server that goes away after it was listed keeps its tools offered (calls get
        error results the model reads) rather than failing the reply.
        """
        self._check_open()
        if self._tools is not None and not self._stale:
            return list(self._tools)
        if self._unavailable is not None:
            return []
        try:
            await self._refresh()
        except MCPConnectionError as exc:
            if self._tools is not None:
                self._stale = False  # retried after a reconnect, or next reply (stateless)
                logger.warning("%s; offering the tools listed before", exc)
                return list(self._tools)
            if not self.is_optional:
                raise
            self._unavailable = str(exc)
            logger.warning("%s; continuing without its tools", exc)
            return []
        return list(self._tools or ())

    async def _refresh(self) -> None:
        async with self._get_locks()[1]:  # one listing at a time; the others reuse it
            if self._tools is not None and not self._stale:
                return
            self._stale = False  # a change announced while listing marks it stale again
            try:
                try:
                    specs = await self._with_client(self._list_all)
                except _ConnectionLost:  # a dropped session: reconnect once
                    specs = await self._with_client(self._list_all)
            except TimeoutError:
                self._stale = True
                raise MCPConnectionError(
                    f"MCP server {self.name!r} did not list its tools within {self._timeout}s"
                ) from None
            except SessionClosedError:
                self._check_open()
                raise
            except MCPConnectionError:
                self._stale = True
                raise
            except Exception as exc:
                self._stale = True
                raise MCPConnectionError(
                    self._redact(
                        f"MCP server {self.name!r} failed to list its tools ({describe(exc)})"
                    )
                ) from exc
            self._install(specs)

    def _install(self, specs: list[Any]) -> None:
        tools: dict[str, MCPTool] = {}
        for spec in specs:
            if not self._is_enabled(spec.name):
                continue
            tool = MCPTool(self.name, spec, self._call, trust_annotations=self.trust_annotations)
            if tool.name in tools:  # only if a name looks like another's hashed form
                logger.warning(
                    "MCP server %r: tools %r and %r both become %r; offering the first only",
                    self.name,
                    tools[tool.name].remote_name,
                    spec.name,
                    tool.name,
                )
                continue
            tools[tool.name] = tool
        self._specs = specs
        self._server_tools = {spec.name for spec in specs}
        extra = resource_tools(self) if self.resource_tools and self._has_resources else []
        self._tools = [*tools.values(), *extra]
        missing = (self.enable_tools or frozenset()) - self._server_tools
        if missing:
            logger.warning(
                "MCP server %r has no tools named %s (from `enable_tools`)",
                self.name,
                ", ".join(sorted(missing)),
            )

    async def _list_all(self, client: Client) -> list[Any]:
        self._has_resources = client.server_capabilities.resources is not None
        specs: list[Any] = []
        cursor: str | None = None
        while True:
            async with asyncio.timeout(self._timeout):
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
        disabled = [t for t in self._server_tools if tool_name == _tool_name(self.name, t)]
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
        if self._closed:
            return _error(
                f"Error: {shown} cannot be called: MCP client {self.name!r} is closed. "
                "Continue without it."
            )

        async def operation(client: Client) -> Any:
            if not self.is_stateful:
                self._prime(client)
            return await client.call_tool(remote, arguments, progress_callback=progress)

        key = context.tool_call_id or str(id(context))
        self._in_flight[key] = context
        try:
            async with asyncio.timeout(self.execution_timeout):
                result = await self._with_client(operation)
        except TimeoutError:
            return _error(
                f"Error: {shown} did not finish within {self.execution_timeout}s "
                "(the MCP client's `execution_timeout`); it was cancelled. Try smaller input "
                "or another approach."
            )
        except SessionClosedError:
            return _error(
                f"Error: MCP client {self.name!r} was closed while the call was running (the "
                "agent is shutting down); the call may or may not have taken effect."
            )
        except _ConnectionLost as exc:
            return _error(
                self._redact(
                    f"Error: the connection to MCP server {self.name!r} was lost during the "
                    f"call ({exc}); the call may or may not have taken effect. The next call "
                    "reconnects."
                )
            )
        except MCPConnectionError as exc:
            return _error(self._redact(f"Error: {exc}"))
        except Exception as exc:
            return _error(self._redact(f"Error: calling {shown} failed: {describe(exc)}"))
        finally:
            self._in_flight.pop(key, None)
            cancel_requests_of(key)
        return convert_result(result)

    def __repr__(self) -> str:
        kind = "stateful" if self.is_stateful else "stateless"
        return f"<MCPClient {self.name!r} {kind}>"


def _error(text: str) -> ToolResultBlock:
    return ToolResultBlock(id="", name="", output=text, state=ToolResultState.ERROR)
