"""Running the suite leaves nothing behind: Redis db 0 and `examples/` are as they were.

A slice of the suite that runs the storage examples (SQLite and Redis) and the examples that
write files is run twice in a fresh interpreter, against a private `redis-server` (so that
other processes writing to a shared Redis cannot blur the count). Before and after, the keys
of its db 0 and of the suite's db 13 are counted, and the files under `examples/` listed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import redis

from _ports import start_redis

ROOT = Path(__file__).parent.parent
SLICE = ["tests/test_examples.py", "-k", "redis or sqlite or resume or skills or compression"]


@pytest.fixture
def private_redis() -> Iterator[int]:
    """A `redis-server` of this test's own (`_ports.start_redis`); stopped afterwards."""
    if shutil.which("redis-server") is None:
        if os.environ.get("TETHER_REQUIRE_REDIS") == "1":
            pytest.fail("`redis-server` is not on PATH (TETHER_REQUIRE_REDIS=1 is set)")
        pytest.skip("`redis-server` is not on PATH (apt-get install redis-server)")
    folder = tempfile.mkdtemp(prefix="tether-redis-")
    try:
        server, port = start_redis(["--dir", folder, "--save", "", "--appendonly", "no"])
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    try:
        yield port
    finally:
        server.kill()
        server.wait()
        shutil.rmtree(folder, ignore_errors=True)


def key_counts(port: int) -> tuple[int, int]:
    counts = []
    for db in (0, 13):
        client = redis.Redis(port=port, db=db)
        counts.append(int(client.dbsize()))
        client.close()
    return counts[0], counts[1]


def example_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*"))


@pytest.mark.long
def test_two_runs_leave_redis_db0_and_examples_untouched(private_redis: int) -> None:
    redis.Redis(port=private_redis, db=0).set("a-developer-key", "mine")
    before, files = key_counts(private_redis), example_files()
    src = os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")])
    env = {
        **os.environ,
        "PYTHONPATH": src,
        "TETHER_TEST_REDIS_URL": f"redis://127.0.0.1:{private_redis}/13",
        "TETHER_REQUIRE_REDIS": "1",
    }
    for _ in range(2):
        out = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *SLICE],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-2000:]
        assert " passed" in out.stdout and "skipped" not in out.stdout, out.stdout[-1000:]
    assert before == (1, 0)
    assert key_counts(private_redis) == (1, 0)  # db 0 untouched; db 13 cleaned up
    assert redis.Redis(port=private_redis).get("a-developer-key") == b"mine"
    assert example_files() == files
