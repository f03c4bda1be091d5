"""`tests/_ports.py`: the suite's servers get a port without a pick-then-bind race."""

from __future__ import annotations

import asyncio
import errno
import os
import shutil
import socket
import subprocess
from collections.abc import Iterator

import pytest
import redis

import _ports


@pytest.fixture
def listening() -> Iterator[int]:
    """A port another process (here: this test) listens on."""
    if shutil.which("redis-server") is None:
        if os.environ.get("TETHER_REQUIRE_REDIS") == "1":
            pytest.fail("`redis-server` is not on PATH (TETHER_REQUIRE_REDIS=1 is set)")
        pytest.skip("`redis-server` is not on PATH (apt-get install redis-server)")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield int(sock.getsockname()[1])


def _stop(process: subprocess.Popen[bytes]) -> None:
    process.kill()
    process.wait(timeout=10)


def test_redis_tries_another_port_when_the_first_was_taken(
    listening: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    offered = iter([listening])  # the first port offered is taken before redis binds it
    fallback = _ports._unused_port
    monkeypatch.setattr(_ports, "_unused_port", lambda: next(offered, None) or fallback())
    process, port = _ports.start_redis(["--save", "", "--appendonly", "no"])
    try:
        assert port != listening
        client = redis.Redis(port=port)
        assert client.ping()
        client.close()
    finally:
        _stop(process)


def test_redis_on_a_given_taken_port_says_so(listening: int) -> None:
    with pytest.raises(RuntimeError, match=f"port {listening} is taken"):
        _ports.start_redis(["--save", ""], port=listening)


def test_a_refused_port_refuses_while_held() -> None:
    with _ports.refused_port() as port, pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_a_held_port_is_taken_by_no_one_but_the_server_told_it() -> None:
    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"hi")
        await writer.drain()
        writer.close()

    async def serve_and_ask(port: int) -> bytes:
        async with await asyncio.start_server(answer, "127.0.0.1", port):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            said = await reader.read()
            writer.close()
            await writer.wait_closed()
            return said

    with _ports.held_port() as port:
        with socket.socket() as other, pytest.raises(OSError) as taken:
            other.bind(("127.0.0.1", port))  # a parallel test's server cannot take it
        assert taken.value.errno == errno.EADDRINUSE
        assert asyncio.run(serve_and_ask(port)) == b"hi"  # the one told the port can
