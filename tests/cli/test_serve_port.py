"""`tether serve --port 0`: the kernel picks the port, and `tether serve` announces that one."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from _ports import bound_url

MAIN = "import sys; from tether.cli import main; sys.exit(main())"


@contextmanager
def _serving(cwd: Path, *args: str) -> Iterator[tuple[str, str]]:
    """`tether serve --port 0 ARGS` until the block ends: its announced URL and its log."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TETHER_", "OPENAI_"))}
    log = cwd / "serve.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-c", MAIN, "serve", "--port", "0", *args],
            cwd=cwd,
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    try:
        url = bound_url(log, proc)
        assert _port(url) != 0, log.read_text()  # the port it got, not the one asked for
        deadline = time.monotonic() + 30
        while True:  # waits for an answer, not for a duration
            try:
                if httpx.get(f"{url}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, log.read_text()
            time.sleep(0.05)
        yield url, log.read_text()
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1])


def test_port_zero_announces_the_port_it_serves_on(tmp_path: Path) -> None:
    with _serving(tmp_path, "--storage", f"sqlite:///{tmp_path / 's.db'}") as (url, log):
        port = _port(url)
        assert f"on port {port};" in log  # the Host rule names the same port
        assert "on port 0" not in log and ":0 " not in log, log
        # the Host check compares with the bound port: a request naming it is answered
        assert httpx.get(f"{url}/healthz", headers={"host": f"localhost:{port}"}).is_success


def test_port_zero_with_two_workers(tmp_path: Path, redis_url: str) -> None:
    import redis

    prefix = f"serve-port-{uuid.uuid4().hex[:8]}"
    try:
        with _serving(
            tmp_path, "--workers", "2", "--storage", redis_url, "--redis-prefix", prefix
        ) as (url, log):
            assert "2 worker(s)" in log
            for _ in range(4):  # whichever worker accepts, the one socket answers
                assert httpx.get(f"{url}/healthz").status_code == 200
    finally:
        client = redis.Redis.from_url(redis_url)
        try:
            for name in client.scan_iter(match=f"{prefix}*", count=500):
                client.delete(name)
        finally:
            client.close()


@pytest.mark.parametrize("port", ["-1", "65536"])
def test_port_out_of_range(tmp_path: Path, port: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "serve", "--port", port],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert f"--port {port} is not a port number" in done.stderr


def test_connections_on_the_bound_socket_send_without_delay() -> None:
    """asyncio sets `TCP_NODELAY` on them (SSE frames are not held back), as uvicorn's own."""
    import asyncio
    import socket

    from tether.cli._serve_check import bind_port

    async def nodelay(sock: socket.socket) -> int:
        seen: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def accepted(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            conn = writer.get_extra_info("socket")
            seen.set_result(conn.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY))
            writer.close()

        async with await asyncio.start_server(accepted, sock=sock):
            _, writer = await asyncio.open_connection(*sock.getsockname()[:2])
            try:
                return await asyncio.wait_for(seen, 10)
            finally:
                writer.close()

    with bind_port("127.0.0.1", 0) as sock:
        assert asyncio.run(nodelay(sock)) == 1
