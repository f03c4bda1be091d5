"""Real MCP servers for the MCP tests: the demo server over streamable HTTP and SSE."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator

import pytest
from mcp_testkit import SERVER

from _ports import reporting_server


@pytest.fixture(scope="module")
def http_url() -> Iterator[str]:
    """One streamable-HTTP demo server shared by a module (its counters only grow)."""
    with reporting_server(SERVER, "--http") as (_proc, port):
        yield f"http://127.0.0.1:{port}/mcp"


@pytest.fixture
def http_server() -> Iterator[tuple[subprocess.Popen[str], str]]:
    """A streamable-HTTP demo server of the test's own (to kill it)."""
    with reporting_server(SERVER, "--http") as (proc, port):
        yield proc, f"http://127.0.0.1:{port}/mcp"


@pytest.fixture(scope="module")
def sse_server() -> Iterator[str]:
    with reporting_server(SERVER, "--sse") as (_proc, port):
        yield f"http://127.0.0.1:{port}/sse"
