"""The browser step of an OAuth login: show the URL, catch the redirect on a loopback port."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from urllib.parse import urlsplit

from tether.mcp._oauth import AuthorizeHandler

__all__ = ["loopback_authorize"]

_PAGE = (
    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n"
    b"tether: login received, you can close this tab.\n"
)


def loopback_authorize(
    redirect_uri: str, show: Callable[[str], Awaitable[None]], *, timeout: float = 300
) -> AuthorizeHandler:
    """An `authorize` handler: `show(url)` to the user, then wait for the browser's redirect.

    Listens on the host and port of `redirect_uri` (a loopback address) until the browser
    arrives there, for at most `timeout` seconds.
    """
    parts = urlsplit(redirect_uri)
    host = parts.hostname or "127.0.0.1"
    port = parts.port or 80

    async def authorize(url: str) -> str:
        landed: asyncio.Future[str] = asyncio.get_running_loop().create_future()

        async def on_connect(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                line = (await reader.readline()).decode("latin-1").split()
                if len(line) >= 2 and not landed.done():
                    landed.set_result(f"{parts.scheme}://{parts.netloc}{line[1]}")
                writer.write(_PAGE)
                await writer.drain()
            finally:
                writer.close()

        server = await asyncio.start_server(on_connect, host, port)
        async with server:
            await show(url)
            async with asyncio.timeout(timeout):
                return await landed

    return authorize
