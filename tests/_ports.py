"""Servers the tests start bind their port themselves and report it: no port picked first.

A port picked free and bound later by another process can be taken in between by a
parallel test (a run died on "address already in use"). So:

- `tether serve --port 0` binds port 0 and announces the URL it got (`tether serve: … on
  http://…:PORT (…`): `bound_url(log)` reads it; in-process uvicorn servers use
  `UvicornThread`, which reads the port from the listening socket.
- PostgreSQL listens on a Unix socket in its own directory (`tests/pg_helpers.py`).
- A port that must refuse connections (a server that is down) is `refused_port()`: bound
  and held by the test, never listening.
- A port a child process must be told before it binds it (the OAuth loopback redirect,
  registered before `tether chat` listens on it) is `held_port()`: held by the test with
  address reuse on, so the kernel gives it to no other bind, and the child's own listening
  socket (address reuse on, as asyncio's servers bind) shares it.
- `redis-server` cannot bind port 0 and report it, so `start_redis` is the one place that
  chooses a port: it tries one nothing listens on and, when another process took it in
  between, tries another.
"""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

SERVE_URL = re.compile(rb"tether serve: .* on (https?://\S+:\d+) \(")
"""`tether serve`'s announcement of the URL it listens on."""


def bound_url(
    log: Path, process: subprocess.Popen[Any], *, after: int = 0, timeout: float = 30
) -> str:
    """The URL `tether serve --port 0` announces (it listens from then on), read from its log.

    `after`: the log's size before this process started (an appended log).
    """
    deadline = time.monotonic() + timeout
    while True:  # waits for the process to say it, not for a duration
        found = SERVE_URL.search(log.read_bytes(), after) if log.exists() else None
        if found:
            return found.group(1).decode()
        if process.poll() is not None or time.monotonic() > deadline:
            text = log.read_text(errors="replace")[-3000:] if log.exists() else ""
            raise RuntimeError(f"the server did not report its port: {text}")
        time.sleep(0.02)


class UvicornThread:
    """uvicorn serving an app in a thread of this process, on a port the OS picks.

    `port` and `url` are set once the server listens (on entering the `with` block).
    """

    def __init__(self, app: Any) -> None:
        import uvicorn

        self.port = 0
        self.url = ""
        # No WebSocket routes here: `ws="none"` loads no WebSocket library.
        config = uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning", ws="none")
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> UvicornThread:
        self.thread.start()
        deadline = time.monotonic() + 20
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("the test server did not start")
            time.sleep(0.01)
        self.port = int(self.server.servers[0].sockets[0].getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


@contextmanager
def refused_port() -> Iterator[int]:
    """A port on 127.0.0.1 that refuses connections while the block runs (bound, no listen)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


@contextmanager
def held_port() -> Iterator[int]:
    """A port on 127.0.0.1 kept, while the block runs, for a child that binds it itself.

    The test's socket is bound with `SO_REUSEADDR` and never listens: Linux hands the port
    to no `bind(port 0)` and refuses a bind without address reuse, while a server that
    sets it (asyncio's `start_server`, uvicorn) binds and listens there alongside.
    """
    with socket.socket() as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def _unused_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_redis(
    args: Sequence[str], *, port: int | None = None, attempts: int = 20
) -> tuple[subprocess.Popen[bytes], int]:
    """Start `redis-server` on 127.0.0.1 and wait until it accepts connections.

    `port=None` takes a port nothing listens on, and another if a parallel process took it
    before redis-server bound it. A given `port` (a restart on the port clients know) is
    tried once. Returns the process (its output is closed once it is ready) and its port.
    """
    for _ in range(attempts if port is None else 1):
        chosen = _unused_port() if port is None else port
        cmd = ["redis-server", "--port", str(chosen), "--bind", "127.0.0.1", *args]
        process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        assert process.stdout is not None
        said = b""
        for line in process.stdout:  # its own log says when it is ready, no sleeps
            said += line
            if b"Ready to accept connections" in line:
                process.stdout.close()
                return process, chosen
        process.wait(timeout=10)
        process.stdout.close()
        if b"Address already in use" not in said:
            raise RuntimeError(f"redis-server did not start: {said.decode(errors='replace')}")
    if port is not None:
        raise RuntimeError(f"redis-server: port {port} is taken by another process")
    raise RuntimeError(f"redis-server found no free port in {attempts} tries")


@contextmanager
def reporting_server(*args: str | Path) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """`python ARGS`, a test server that prints `PORT <n>` once it listens: it and its port.

    Killed at the end (the servers of `tests/mcp/servers` and their kind).
    """
    proc = subprocess.Popen(
        [sys.executable, *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    try:
        line = proc.stdout.readline()  # printed once it accepts connections
        assert line.startswith("PORT "), f"{args[0]} did not start: {line!r}"
        yield proc, int(line.split()[1])
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
