"""Open one MCP session with the official SDK (imported here, on first use only)."""

from __future__ import annotations

import asyncio
import warnings
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Any

from tether.errors import MCPAuthorizationRequired, MCPConnectionError, MissingDependencyError
from tether.mcp._config import HttpMCPConfig, MCPConfig, StdioMCPConfig
from tether.mcp._frames import FrameGuard, guarding, unguard
from tether.mcp._hooks import Hooks
from tether.mcp._oauth import LoginNeeded, build_auth
from tether.mcp._redact import Redactor, redact_url
from tether.mcp._stderr import StderrSink

if TYPE_CHECKING:
    from mcp import Client

__all__ = ["deprecated_ok", "describe", "leaf_errors", "open_client"]

MessageHandler = Callable[[Any], Awaitable[None]]


def leaf_errors(exc: BaseException) -> list[BaseException]:
    """The exceptions inside (nested) exception groups, or `[exc]`."""
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for sub in exc.exceptions for leaf in leaf_errors(sub)]
    return [exc]


def describe(exc: BaseException) -> str:
    """A one-line account of a (possibly grouped) failure."""
    leaves = leaf_errors(exc)
    return "; ".join(f"{type(e).__name__}: {e}" if str(e) else type(e).__name__ for e in leaves)


class _GuardedReadStream:
    """Forwards a transport's read stream through a `FrameGuard`; sets `dropped` at its end."""

    def __init__(self, inner: Any, guard: FrameGuard, dropped: asyncio.Event | None) -> None:
        self._inner = inner
        self._guard = guard
        self._dropped = dropped
        self._ready: deque[Any] = deque()

    @property
    def last_context(self) -> Any:
        return getattr(self._inner, "last_context", None)

    def _ended(self) -> None:
        if self._dropped is not None:
            self._dropped.set()

    async def _next(self, pull: Callable[[], Awaitable[Any]]) -> Any:
        while not self._ready:
            try:
                item = await pull()
            except BaseException:
                self._ended()
                raise
            self._ready.extend(self._guard.received(item))
        return self._ready.popleft()

    async def receive(self) -> Any:
        return await self._next(self._inner.receive)

    async def aclose(self) -> None:
        self._ended()
        await self._inner.aclose()

    def __aiter__(self) -> _GuardedReadStream:
        return self

    async def __anext__(self) -> Any:
        return await self._next(self._inner.__anext__)

    async def __aenter__(self) -> _GuardedReadStream:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()


class _GuardedWriteStream:
    """Forwards a transport's write stream, telling the `FrameGuard` what is sent."""

    def __init__(self, inner: Any, guard: FrameGuard) -> None:
        self._inner = inner
        self._guard = guard

    async def send(self, item: Any) -> None:
        self._guard.sent(item)
        await self._inner.send(item)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def __aenter__(self) -> _GuardedWriteStream:
        await self._inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> Any:
        return await self._inner.__aexit__(*exc)


@asynccontextmanager
async def _guarded(transport: Any, name: str, dropped: asyncio.Event | None) -> AsyncIterator[Any]:
    guard = FrameGuard(name)
    async with transport as (read_stream, write_stream):
        yield (
            _GuardedReadStream(read_stream, guard, dropped),
            _GuardedWriteStream(write_stream, guard),
        )


def _stdio_transport(config: StdioMCPConfig, sink: StderrSink | None) -> Any:
    from mcp import StdioServerParameters
    from mcp.client.stdio import stdio_client

    # The SDK merges `env` over a minimal environment (HOME, PATH, ...): our other
    # variables, secrets included, never reach the server unless configured.
    params = StdioServerParameters(
        command=config.command, args=list(config.args), env=config.env, cwd=config.cwd
    )
    if sink is None:
        return stdio_client(params)
    return stdio_client(params, errlog=sink.errlog)


async def _http_transport(
    config: HttpMCPConfig, sse: bool, stack: AsyncExitStack, hooks: Hooks, seen: set[int]
) -> Any:
    import httpx2

    async def watch(response: httpx2.Response) -> None:
        seen.add(response.status_code)  # the SDK reports a 401 without its status

    timeout = httpx2.Timeout(config.timeout, read=max(300.0, config.timeout))
    if sse:
        from mcp.client.sse import sse_client

        return sse_client(config.url, headers=config.headers, timeout=config.timeout)
    from mcp.client.streamable_http import streamable_http_client

    auth = None
    if config.auth is not None:
        auth = build_auth(
            config.url, config.auth, hooks.token_store, hooks.authorize, hooks.identity_assertion
        )
    http = await stack.enter_async_context(
        httpx2.AsyncClient(
            headers=config.headers,
            timeout=timeout,
            auth=auth,
            event_hooks={"response": [watch]},
        )
    )
    return streamable_http_client(config.url, http_client=http)


def _is_unreachable(exc: BaseException) -> bool:
    """True when nothing answered at all (no point trying another HTTP transport)."""
    return any(
        isinstance(e, OSError | TimeoutError)
        or type(e).__name__ in ("ConnectError", "ConnectTimeout")
        for e in leaf_errors(exc)
    )


def _login_required(
    name: str, config: MCPConfig, exc: BaseException, seen: set[int]
) -> MCPAuthorizationRequired | None:
    """A 401, a login that needs a browser nobody gave us, or a failed login, typed."""
    if not isinstance(config, HttpMCPConfig):
        return None
    leaves = leaf_errors(exc)
    failed = [e for e in leaves if type(e).__name__.startswith("OAuth")]
    wanted = 401 in seen and config.auth is None
    if not (wanted or failed or any(isinstance(e, LoginNeeded) for e in leaves)):
        return None
    where = redact_url(config.url)
    if config.auth is None:
        fix = (
            "configure OAuth with `HttpMCPConfig(auth=OAuthConfig())` (or headers with a "
            f"token), or run `/mcp login {name}` in `tether chat`"
        )
    elif failed:
        fix = (
            f"the OAuth login failed ({describe(failed[0])}); check the `OAuthConfig`, or "
            f"run `/mcp login {name}` in `tether chat` to log in again"
        )
    else:
        fix = (
            "log in: give the `MCPClient` an `authorize` handler, or run "
            f"`/mcp login {name}` in `tether chat`"
        )
    text = Redactor(config)(f"MCP server {name!r} at {where} requires authorization; {fix}")
    return MCPAuthorizationRequired(text, server=name)


async def _enter(
    stack: AsyncExitStack,
    name: str,
    config: MCPConfig,
    sse: bool,
    handler: MessageHandler | None,
    dropped: asyncio.Event | None,
    hooks: Hooks,
    seen: set[int],
    sink: StderrSink | None = None,
) -> Client:
    from mcp import Client

    if isinstance(config, StdioMCPConfig):
        transport = _stdio_transport(config, sink)
    else:
        transport = await _http_transport(config, sse, stack, hooks, seen)
    guarded: Any = _guarded(transport, name, dropped)
    handler_fn: Any = handler
    client = Client(guarded, message_handler=handler_fn, cache=None, **hooks.client_kwargs())
    entered = await stack.enter_async_context(client)
    if hooks.log_level is not None and entered.protocol_version not in _modern_versions():
        with deprecated_ok():  # deprecated in 2026-07-28, the way before it
            await entered.set_logging_level(hooks.log_level)  # type: ignore[arg-type]  # checked name
    return entered


def deprecated_ok() -> warnings.catch_warnings[None]:
    """Silence the SDK's deprecation of handshake-era features we use only there."""
    from mcp.shared.exceptions import MCPDeprecationWarning

    return warnings.catch_warnings(action="ignore", category=MCPDeprecationWarning)


def _modern_versions() -> frozenset[str]:
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    return frozenset(MODERN_PROTOCOL_VERSIONS)


def _unreachable(
    name: str, config: MCPConfig, exc: BaseException, sink: StderrSink | None = None
) -> MCPConnectionError:
    where = (
        f"`{config.command} {' '.join(config.args)}`".strip()
        if isinstance(config, StdioMCPConfig)
        else redact_url(config.url)
    )
    stderr = sink.describe_tail() if sink is not None else ""
    return MCPConnectionError(
        Redactor(config)(
            f"MCP server {name!r} could not be reached at {where} ({describe(exc)}); check "
            "that it runs and the config is right, or pass `is_optional=True` to start "
            f"without it{stderr}"
        )
    )


@asynccontextmanager
async def _open(
    name: str,
    config: MCPConfig,
    handler: MessageHandler | None,
    dropped: asyncio.Event | None,
    hooks: Hooks,
) -> AsyncIterator[Client]:
    try:
        import mcp  # noqa: F401
    except ImportError as exc:
        raise MissingDependencyError("mcp", "mcp", "MCPClient") from exc
    sse_first = isinstance(config, HttpMCPConfig) and config.transport == "sse"
    can_fall_back = (
        isinstance(config, HttpMCPConfig) and config.transport == "auto" and config.auth is None
    )
    sink = StderrSink(name) if isinstance(config, StdioMCPConfig) else None
    seen: set[int] = set()  # HTTP statuses answered while connecting
    token = guarding()  # the SDK's reader task, started below, inherits it
    async with AsyncExitStack() as stack:
        stack.callback(unguard, token)
        if sink is not None:
            await sink.start()
            stack.push_async_callback(sink.finish)  # after the process has stopped
        try:
            client = await _enter(
                stack, name, config, sse_first, handler, dropped, hooks, seen, sink
            )
        except Exception as exc:
            if sink is not None:
                await sink.finish()  # what the server said before it failed
            login = _login_required(name, config, exc, seen)
            if login is not None:
                raise login from None  # the chained error could quote a token
            if not can_fall_back or _is_unreachable(exc):
                raise _unreachable(name, config, exc, sink) from exc
            await stack.aclose()
            if dropped is not None:
                dropped.clear()  # the failed attempt's stream ended, not this session's
            try:
                client = await _enter(stack, name, config, True, handler, dropped, hooks, seen)
            except Exception as sse_exc:
                raise _unreachable(name, config, exc) from sse_exc
        if sink is not None:
            sink.spawned()
        yield client


def open_client(
    name: str,
    config: MCPConfig,
    handler: MessageHandler | None = None,
    dropped: asyncio.Event | None = None,
    hooks: Hooks | None = None,
) -> AbstractAsyncContextManager[Client]:
    """Connect and negotiate; the caller's task must also be the one that exits it.

    `dropped` is set when the server's stream ends. Connection failures raise
    `MCPConnectionError` naming the server; with `transport="auto"` an HTTP server that
    rejects streamable HTTP is tried again over legacy SSE.
    """
    return _open(name, config, handler, dropped, hooks or Hooks(server=name))
