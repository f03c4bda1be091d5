"""Shared fixtures and helpers: the suite runs offline and leaves nothing behind.

- Redis: tests that need a server use `redis_url` (db 13 by default, from
  `TETHER_TEST_REDIS_URL`) or a unique key prefix, and delete what they write. Without a
  server they skip with the reason; with `TETHER_REQUIRE_REDIS=1` they fail instead. The
  suite never starts or stops a Redis server itself (`.ci/run` starts one).
- bubblewrap and Chromium: `require_bwrap()` / `require_chromium()` skip the same way
  (`TETHER_REQUIRE_BWRAP=1`, `TETHER_REQUIRE_CHROMIUM=1`).
- Files: only under `tmp_path` (examples take their paths from the environment).

See `tests/README.md`.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
from collections.abc import Iterator
from functools import cache
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import settings

from pg_helpers import drop_schema, require_postgres, unique_schema

# CI runs are reproducible (a fixed example sequence); local runs search anew each time.
settings.register_profile("ci", derandomize=True)
if os.environ.get("CI"):
    settings.load_profile("ci")

REDIS_URL = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/13")
"""The Redis the suite may write to: its own database number, never db 0."""

CHROMIUM = os.environ.get("TETHER_CHROMIUM", "/usr/bin/chromium")

_REDIS_FIXTURES = frozenset({"redis_url", "redis_prefix", "redis_server", "seed_redis_session"})


def _required(name: str) -> bool:
    return os.environ.get(f"TETHER_REQUIRE_{name}") == "1"


def _missing(name: str, reason: str) -> None:
    """Skip the test with `reason`, or fail it when `TETHER_REQUIRE_<name>=1`."""
    if _required(name):
        pytest.fail(f"{reason} (TETHER_REQUIRE_{name}=1 is set, so this is a failure)")
    pytest.skip(reason)


@cache
def redis_answers() -> bool:
    """Whether the suite's Redis (`TETHER_TEST_REDIS_URL`) accepts connections."""
    parts = urlsplit(REDIS_URL)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 6379), 0.5):
            return True
    except OSError:
        return False


def require_redis() -> None:
    """Skip (or fail, under `TETHER_REQUIRE_REDIS=1`) unless the suite's Redis answers."""
    if not redis_answers():
        _missing("REDIS", f"no Redis server answers at {REDIS_URL} (start `redis-server`)")


def require_redis_server_binary() -> None:
    """Skip (or fail) unless `redis-server` is on PATH (tests that start a private one)."""
    if shutil.which("redis-server") is None:
        _missing("REDIS", "`redis-server` is not on PATH (apt-get install redis-server)")


def require_bwrap() -> None:
    """Skip (or fail, under `TETHER_REQUIRE_BWRAP=1`) unless bubblewrap is on PATH."""
    if shutil.which("bwrap") is None:
        _missing("BWRAP", "bubblewrap (`bwrap`) is not on PATH (apt-get install bubblewrap)")


def require_chromium() -> None:
    """Skip (or fail, under `TETHER_REQUIRE_CHROMIUM=1`) unless Chromium is installed."""
    if not os.access(CHROMIUM, os.X_OK):
        _missing("CHROMIUM", f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")


def pytest_configure(config: pytest.Config) -> None:
    """Register the markers that say what a test needs."""
    config.addinivalue_line("markers", "redis: needs the Redis server at TETHER_TEST_REDIS_URL")
    config.addinivalue_line("markers", "bwrap: needs bubblewrap on PATH")
    config.addinivalue_line("markers", "chromium: needs Chromium")
    config.addinivalue_line("markers", "postgres: needs PostgreSQL at TETHER_POSTGRES_DSN")
    config.addinivalue_line(
        "markers", "slow: whole-system runs (browser, terminal, protocol suites); -m 'not slow'"
    )


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: two workers per core. A third of the suite's time is spent waiting on
    other processes (servers, Chromium, a terminal's child): with one worker per core the
    cores idle meanwhile (tests/cli/chat + tests/app_server on 2 cores: 179 s with 2
    workers, 116 s with 4, 121 s with 6; the same CPU time)."""
    return 2 * len(os.sched_getaffinity(0))


SLOW_FOLDERS = ("e2e", "conformance", "protocols")
"""Folders of whole-system tests, marked `slow` (the README command still runs them)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        parts = item.path.parts
        if "tests" in parts and parts[parts.index("tests") + 1] in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)


def _needs_redis(item: pytest.Item) -> bool:
    if item.get_closest_marker("redis"):
        return True
    names = set(getattr(item, "fixturenames", ()))
    callspec = getattr(item, "callspec", None)
    params = callspec.params.values() if callspec is not None else ()
    return bool(names & _REDIS_FIXTURES) or "redis" in params


def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (or fail) tests whose marker or fixtures need what this machine lacks."""
    if _needs_redis(item):
        require_redis()
        if "redis_server" in getattr(item, "fixturenames", ()):
            require_redis_server_binary()
    if item.get_closest_marker("bwrap"):
        require_bwrap()
    if item.get_closest_marker("chromium"):
        require_chromium()
    if item.get_closest_marker("postgres") or "pg_schema" in getattr(item, "fixturenames", ()):
        require_postgres()


_SKIP_REASONS = {
    "REDIS": re.compile(r"\bredis", re.IGNORECASE),
    "BWRAP": re.compile(r"bubblewrap|\bbwrap\b", re.IGNORECASE),
    "CHROMIUM": re.compile(r"chromium", re.IGNORECASE),
    "POSTGRES": re.compile(r"postgres|psycopg|initdb", re.IGNORECASE),
}


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Under `TETHER_REQUIRE_<X>=1`, a skip that blames X (from any test's own check) fails."""
    report = yield
    if report.skipped and isinstance(report.longrepr, tuple):
        reason = str(report.longrepr[2])
        for name, pattern in _SKIP_REASONS.items():
            if _required(name) and pattern.search(reason):
                report.outcome = "failed"
                report.longrepr = f"skipped ({reason}) but TETHER_REQUIRE_{name}=1 is set"
    return report


@pytest.fixture
def redis_url() -> str:
    """The suite's Redis URL (db 13 by default); the test deletes the keys it writes."""
    return REDIS_URL


@pytest.fixture
def pg_schema() -> Iterator[str]:
    """A PostgreSQL schema of this test's own on `TETHER_POSTGRES_DSN`, dropped afterwards.

    Skips (or fails, under `TETHER_REQUIRE_POSTGRES=1`) when no server answers.
    """
    require_postgres()
    schema = unique_schema()
    try:
        yield schema
    finally:
        drop_schema(schema)
