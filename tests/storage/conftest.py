"""Storage fixtures: SQLite files in tmp dirs, real Redis with a unique key prefix."""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as aioredis
from storage_helpers import REDIS_HOST, REDIS_PORT, RedisServer, drop_prefix


@pytest_asyncio.fixture
async def redis_prefix() -> AsyncIterator[str]:
    """A key prefix no other test uses; its keys are deleted afterwards."""
    prefix = f"tether-test-{secrets.token_hex(6)}"
    client = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT)
    try:
        yield prefix
    finally:
        await drop_prefix(client, prefix)
        await client.aclose()


@pytest.fixture
def redis_server() -> Iterator[RedisServer]:
    """A private Redis on a free port; stopped (and its files removed) afterwards."""
    directory = Path(tempfile.mkdtemp(prefix="tether-redis-"))
    server = RedisServer(directory)
    server.start()
    try:
        yield server
    finally:
        server.kill()
        shutil.rmtree(directory, ignore_errors=True)
