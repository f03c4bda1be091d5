"""Shared fixtures: the whole suite runs offline against local servers only."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import settings

from tether.event import AgentEvent

# CI runs are reproducible (a fixed example sequence); local runs search anew each time.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")


def _redis_answers(port: int = 6379) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.5):
            return True
    except OSError:
        return False


@pytest.fixture(scope="session", autouse=True)
def local_redis() -> Iterator[None]:
    """Make sure a Redis server answers on 127.0.0.1:6379 (start one if none does)."""
    started = False
    if not _redis_answers() and shutil.which("redis-server"):
        subprocess.run(
            [
                "redis-server",
                "--daemonize",
                "yes",
                "--bind",
                "127.0.0.1",
                "--port",
                "6379",
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            check=True,
            capture_output=True,
        )
        started = True
        deadline = time.monotonic() + 10
        while not _redis_answers() and time.monotonic() < deadline:
            time.sleep(0.05)
    yield
    if started:
        subprocess.run(["redis-cli", "-p", "6379", "shutdown", "nosave"], capture_output=True)


async def collect(stream: AsyncIterator[AgentEvent]) -> list[AgentEvent]:
    """Drain an event stream into a list."""
    return [event async for event in stream]


def types(events: list[Any]) -> list[str]:
    """The `type` values of a list of events, as plain strings."""
    return [str(e.type) for e in events]
