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
import sys
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
    config.addinivalue_line(
        "markers", "long: a test of over ten seconds; its module runs first (see below)"
    )
    _keep_bytecode(config)
    _steal_work(config)


def _keep_bytecode(config: pytest.Config) -> None:
    """Where bytecode files are off (`PYTHONDONTWRITEBYTECODE`, as on machines that keep
    checkouts clean), keep the suite's in pytest's cache folder (`.pytest_cache/d/pycache`)
    for itself, its workers and its subprocesses; the source tree stays free of them.

    Else each worker rewrites every test module's asserts again (collection 8.8 s a worker,
    3.8 s from the cache) and each of the suite's ~500 Python subprocesses compiles the
    tether modules it imports again.
    """
    cache = getattr(config, "cache", None)
    if not sys.dont_write_bytecode or sys.pycache_prefix or cache is None:
        return
    prefix = str(cache.mkdir("pycache"))
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    os.environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: three workers per two cores. Part of the suite's time is spent waiting on
    other processes (servers, Chromium, a terminal's child), so one worker per core leaves
    the cores idle; more than 1.5 only adds collections and contention. The whole suite on
    2 cores, all services, work stealing: 310 s with 4 workers (491 CPU-s), 290 s with 3
    (454 CPU-s)."""
    return max(2, 3 * len(os.sched_getaffinity(0)) // 2)


def _steal_work(config: pytest.Config) -> None:
    """Under `-n`, an idle worker takes tests queued for another (`--dist worksteal`)
    unless `--dist` is given: with the default split, one worker ran its last 30 s alone."""
    if not any(arg.startswith("--dist") for arg in config.invocation_params.args):
        if getattr(config.option, "dist", "no") == "load":
            config.option.dist = "worksteal"


SLOW_FOLDERS = ("e2e", "conformance", "protocols")
"""Folders of whole-system tests, marked `slow` (the README command still runs them)."""


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark the slow folders; move the modules with a `long` test to the front.

    Workers take tests in order: a 40 s test taken last would end the run alone.
    """
    for item in items:
        parts = item.path.parts
        if "tests" in parts and parts[parts.index("tests") + 1] in SLOW_FOLDERS:
            item.add_marker(pytest.mark.slow)
    first = {item.path for item in items if item.get_closest_marker("long")}
    items.sort(key=lambda item: item.path not in first)  # stable: modules stay whole


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
