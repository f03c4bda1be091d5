"""The seed's persistence sample runs as written, on Redis and on SQLite."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio
from storage_helpers import REDIS_DB as REDIS_DB_NUMBER
from storage_helpers import REDIS_HOST, REDIS_PORT

from tether.app.storage import RedisStorage, SQLiteStorage

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "agentscope_compat"
IDS = ("user_123", "agent_456", "session_789")  # the seed's ids
REDIS_DB = str(
    REDIS_DB_NUMBER
)  # the suite's own database: a developer's sessions in db 0 stay untouched


def run(example: str, cwd: Path) -> list[str]:
    src = str(EXAMPLES.parents[1] / "src")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, *sys.path]), "REDIS_DB": REDIS_DB}
    out = subprocess.run(
        [sys.executable, "-W", "error", str(EXAMPLES / example)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.splitlines()


@pytest_asyncio.fixture
async def seed_redis_session() -> AsyncIterator[None]:
    """The sample writes the seed's ids under the default prefix: clear them around the test."""
    async with RedisStorage(host=REDIS_HOST, port=REDIS_PORT, db=int(REDIS_DB)) as storage:
        await storage.delete_session(*IDS)
        yield
        await storage.delete_session(*IDS)


async def test_the_redis_sample_creates_then_continues_a_session(
    seed_redis_session: None, tmp_path: Path
) -> None:
    assert run("seed_redis.py", tmp_path) == ["Continuing the previous task.", "saved 2 messages"]
    assert run("seed_redis.py", tmp_path) == ["Continuing the previous task.", "saved 4 messages"]
    async with RedisStorage(host=REDIS_HOST, port=REDIS_PORT, db=int(REDIS_DB)) as storage:
        record = await storage.get_session(*IDS)
    assert record is not None and record.version == 2
    assert [m.role for m in record.state.context] == ["user", "assistant"] * 2


async def test_the_sqlite_sample_needs_no_server(tmp_path: Path) -> None:
    assert run("seed_sqlite.py", tmp_path) == ["Continuing the previous task.", "saved 2 messages"]
    assert run("seed_sqlite.py", tmp_path) == ["Continuing the previous task.", "saved 4 messages"]
    async with SQLiteStorage(tmp_path / "sessions.db") as storage:
        record = await storage.get_session(*IDS)
    assert record is not None and record.version == 2
    assert record.state.context[-1].get_text_content() == "Continuing the previous task."
