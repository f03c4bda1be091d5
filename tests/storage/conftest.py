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
from storage_helpers import (
    REDIS_DB,
    REDIS_HOST,
    REDIS_PORT,
    Backend,
    RedisServer,
    drop_prefix,
    sqlite_path,
)


@pytest_asyncio.fixture
async def redis_prefix() -> AsyncIterator[str]:
    """A key prefix no other test uses; its keys are deleted afterwards."""
    prefix = f"tether-test-{secrets.token_hex(6)}"
    client = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
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


@pytest_asyncio.fixture(params=["sqlite", "redis"])
async def backend(
    request: pytest.FixtureRequest, tmp_path: Path, redis_prefix: str
) -> AsyncIterator[Backend]:
    """SQLite (a file in tmp_path) and the real Redis (a unique prefix), in turn."""
    client = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    try:
        yield Backend(request.param, sqlite_path(tmp_path), redis_prefix, client)
    finally:
        await client.aclose()
