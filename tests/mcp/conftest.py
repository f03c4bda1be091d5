"""Real MCP servers for the MCP tests: the demo server over streamable HTTP and SSE."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator

import pytest
from mcp_testkit import SERVER


def _start(flag: str) -> Iterator[tuple[subprocess.Popen[str], int]]:
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), flag],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()  # the server prints its port once it accepts connections
    assert line.startswith("PORT "), f"demo server did not start: {line!r}"
    try:
        yield proc, int(line.split()[1])
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One streamable-HTTP demo server shared by a module (its counters only grow)."""
    for _proc, port in _start("--http"):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A streamable-HTTP demo server of the test's own (to kill it)."""
    for proc, port in _start("--http"):
        yield proc, f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def sse_server() -> Iterator[str]:
    for _proc, port in _start("--sse"):
        yield f"http://127.0.0.1:{port}/sse"
