"""Fixtures for the web UI tests (helpers in `webui.py`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from webui import CHROMIUM, CHROMIUM_ARGS, UI, PageErrors, Server, artifacts_dir, need_chromium


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's headless Chromium, driven by Playwright.

    Module-scoped: Playwright's sync API keeps its own event loop running while it is open,
    which would break every pytest-asyncio test collected after these ones.
    """
    need_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, browser: Any) -> Iterator[Server]:
    """One server on SQLite per test module, for the tests that need no restart."""
    workdir = tmp_path_factory.mktemp("web-serve")
    srv = Server(workdir, f"sqlite:///{workdir / 'sessions.db'}").start()
    yield srv
    srv.stop()


CALL_PASSED = pytest.StashKey[bool]()


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """Remember whether the test's body passed (for `ui`'s screenshots)."""
    report = yield
    if report.when == "call":
        item.stash[CALL_PASSED] = report.passed
    return report


@pytest.fixture
def ui(browser: Any, request: pytest.FixtureRequest) -> Iterator[UI]:
    """A browser context; `ui.page(url)` opens a watched page; screenshots if it failed.

    A test with a server of its own asks for that server before `ui`: pytest tears down in
    reverse, so the pages close before the server stops (else they log refused reconnects).
    """
    folder = artifacts_dir(request)
    errors = PageErrors()
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    context.set_default_timeout(15_000)
    helper = UI(context, errors, folder)
    yield helper
    failed = not request.node.stash.get(CALL_PASSED, False) or errors.errors
    for n, page in enumerate(helper.pages if failed else []):
        if not page.is_closed():
            page.screenshot(path=str(folder / f"page{n}.png"), full_page=True)
    context.close()
    assert errors.errors == [], errors.errors


@pytest.fixture(autouse=True)
def _interrupt_leftovers(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test on the shared server, interrupt what it left running (a failed test)."""
    yield
    if "server" not in request.fixturenames:
        return
    srv: Server = request.getfixturevalue("server")
    listing = httpx.get(f"{srv.url}/v1/sessions", timeout=10).json()
    for info in listing["sessions"]:
        httpx.post(f"{srv.url}/v1/sessions/{info['session_id']}/interrupt", timeout=10)
