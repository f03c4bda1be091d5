"""Helpers for the web UI tests: a real `tether serve` subprocess and Debian's Chromium.

Screenshots go to `test-results/web/<test>/` (or `$TETHER_TEST_RESULTS/web/<test>/`), one
folder per test, for CI to keep as artifacts: the pages of a failed test, and the views a
test shoots on purpose. Every test fails on a `console.error` or an uncaught page error.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from _ports import bound_url

CHROMIUM = "/usr/bin/chromium"
HERE = Path(__file__).parent
ROOT = HERE.parents[2]
REDIS_DB = 11  # this suite's own Redis database; only keys the tests made are deleted
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--js-flags=--expose-gc",  # the timing tests collect garbage before they measure
]


def _need(what: str, env: str, present: bool) -> None:
    if present:
        return
    if os.environ.get(env) == "1":
        pytest.fail(f"{what} is required ({env}=1) but missing")
    pytest.skip(f"{what} is missing (set {env}=1 to fail instead)")


def need_chromium() -> None:
    """Skip (or fail with TETHER_REQUIRE_CHROMIUM=1) when Debian's chromium is absent."""
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        _need("playwright (pip install playwright)", "TETHER_REQUIRE_CHROMIUM", False)
    runnable = Path(CHROMIUM).is_file() and os.access(CHROMIUM, os.X_OK)
    _need(f"an executable Chromium at {CHROMIUM}", "TETHER_REQUIRE_CHROMIUM", runnable)


def redis_answers() -> bool:
    """Does a Redis server answer on 127.0.0.1:6379?"""
    try:
        with socket.create_connection(("127.0.0.1", 6379), timeout=0.5):
            return True
    except OSError:
        return False


@dataclass
class Server:
    """A `tether serve` process serving `web_agents:make_agents`."""

    workdir: Path
    storage: str
    port: int = 0
    """0 until the first `start()` reads the port it bound; a restart binds it again."""
    extra_env: dict[str, str] = field(default_factory=dict)
    args: list[str] = field(default_factory=list)
    proc: subprocess.Popen[bytes] | None = None
    log: Path | None = None

    @property
    def url(self) -> str:
        """The base URL."""
        return f"http://127.0.0.1:{self.port}"

    @property
    def gates(self) -> Path:
        """The folder of gate files the scripted model waits on."""
        return self.workdir / "gates"

    def open_gate(self, name: str) -> None:
        """Let a scripted step waiting on `name` go on."""
        (self.gates / name).touch()

    def start(self) -> Server:
        """Start the process and wait until /healthz answers."""
        self.gates.mkdir(parents=True, exist_ok=True)
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(HERE)]),
            "TETHER_WEB_GATES": str(self.gates),
        }
        env.pop("TETHER_API_KEYS", None)
        env.update(self.extra_env)
        self.log = self.workdir / f"server-{self.port}-{time.monotonic_ns()}.log"
        cmd = [sys.executable, "-c", "from tether.cli import main; main()", "serve"]
        cmd += ["--agents", "web_agents:make_agents", "--storage", self.storage]
        cmd += ["--host", "127.0.0.1", "--port", str(self.port), *self.args]
        with self.log.open("wb") as out:
            self.proc = subprocess.Popen(
                cmd, cwd=self.workdir, env=env, stdout=out, stderr=subprocess.STDOUT
            )
        if not self.port:
            self.port = int(bound_url(self.log, self.proc).rsplit(":", 1)[1])
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tether serve exited: {self.log.read_text()[-3000:]}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return self
            time.sleep(0.05)
        raise RuntimeError(f"tether serve did not answer: {self.log.read_text()[-3000:]}")

    def kill(self) -> None:
        """SIGKILL the process (a crash, not a shutdown)."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(timeout=10)

    def stop(self) -> None:
        """SIGTERM the process and wait for it."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()


def redis_cleanup(prefix: str) -> None:
    """Delete the keys under `prefix` in db 11 (this suite's own keys only)."""
    import redis

    client = redis.Redis(host="127.0.0.1", port=6379, db=REDIS_DB)
    try:
        for key in client.scan_iter(match=f"{prefix}*"):
            client.delete(key)
    finally:
        client.close()


def artifacts_dir(request: pytest.FixtureRequest) -> Path:
    """`test-results/web/<test name>/`, emptied."""
    base = Path(os.environ.get("TETHER_TEST_RESULTS", ROOT / "test-results")) / "web"
    folder = base / re.sub(r"[^\w.-]+", "_", request.node.name)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    return folder


class PageErrors:
    """Console errors and page errors seen by the pages of one test."""

    def __init__(self) -> None:
        self.errors: list[str] = []
        self.allowed: list[re.Pattern[str]] = []

    def allow(self, pattern: str) -> None:
        """Accept console errors matching `pattern` (the browser's own network logs)."""
        self.allowed.append(re.compile(pattern))

    def watch(self, page: Any) -> Any:
        """Record every console.error and uncaught error of `page`."""
        page.on("console", self._console)
        page.on("pageerror", lambda exc: self.errors.append(f"page error: {exc}"))
        return page

    def _console(self, msg: Any) -> None:
        if msg.type != "error":
            return
        if any(p.search(msg.text) for p in self.allowed):
            return
        self.errors.append(f"console.error: {msg.text}")


@dataclass
class UI:
    """The test's browser context, its pages and its output folder."""

    context: Any
    errors: PageErrors
    folder: Path
    pages: list[Any] = field(default_factory=list)

    def page(self, url: str) -> Any:
        """Open `url` in a new watched page."""
        page = self.errors.watch(self.context.new_page())
        self.pages.append(page)
        page.goto(url)
        return page


def open_chat(ui: UI, server: Server) -> Any:
    """A page on a fresh session of the helper agent."""
    from playwright.sync_api import expect

    page = ui.page(server.url)
    new = page.get_by_role("button", name="New session")
    expect(new).to_be_enabled()  # the first load is done
    before = page.locator("#session-list li").count()
    new.click()
    expect(page.locator("#session-list li")).to_have_count(before + 1)
    expect(page.locator("#conversation[aria-busy=false] .intro")).to_be_visible()  # empty
    return page


def send(page: Any, text: str) -> None:
    """Type `text` into the Message box and press Enter."""
    box = page.get_by_role("textbox", name="Message")
    box.fill(text)
    box.press("Enter")


def conversation(page: Any) -> Any:
    """The "Conversation" region."""
    return page.get_by_role("region", name="Conversation")
