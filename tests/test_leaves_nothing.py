"""Running the suite leaves nothing behind: Redis db 0 and `examples/` are as they were.

A slice of the suite that runs every storage example (SQLite and Redis) and the examples
that write files is run twice in a fresh interpreter; before and after, the keys of Redis
db 0 and the files under `examples/` are listed and compared.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import redis

ROOT = Path(__file__).parent.parent
REDIS_URL = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")  # as conftest
SLICE = [
    "tests/test_examples.py",
    "-k",
    "redis or sqlite or resume or skills",
    "tests/storage/test_storage_examples.py",
]


def db0_keys() -> set[bytes]:
    client = redis.Redis.from_url(REDIS_URL.rsplit("/", 1)[0] + "/0")
    try:
        # Other suites' unique prefixes come and go while they run; they clean up themselves.
        return {k for k in client.scan_iter(count=1000) if not k.startswith(b"tether-test-")}
    finally:
        client.close()


def example_files() -> list[str]:
    return sorted(str(p.relative_to(ROOT)) for p in (ROOT / "examples").rglob("*"))


@pytest.mark.redis
def test_two_runs_leave_redis_db0_and_examples_untouched() -> None:
    keys, files = db0_keys(), example_files()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), os.environ.get("PYTHONPATH", "")]),
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
    assert example_files() == files
    assert db0_keys() == keys
