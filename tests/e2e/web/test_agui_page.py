"""The AG-UI example page (`examples/ag_ui`) in Chromium, against a real `tether serve`.

The page loads `@ag-ui/client` unbundled from `.ci/.protocols/node_modules`
(`tests/protocols/install.sh`) through `serve.mjs`, which also passes its runs on to the
service. Skipped without Node or the client, required when `TETHER_REQUIRE_NODE` is set;
the browser is skipped like every web test (`TETHER_REQUIRE_CHROMIUM`).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from webui import ROOT, UI

from _ports import SERVE_URL
from _protocols import MODULES, node_with

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None

EXAMPLE = ROOT / "examples" / "ag_ui"


@contextmanager
def _started(cmd: list[str], env: dict[str, str], cwd: Path, url: str) -> Iterator[str]:
    """Run `cmd` until it prints a URL matching the regex `url` (its log is kept in `cwd`)."""
    log = cwd / f"{Path(cmd[1]).stem}-{time.monotonic_ns()}.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 30
        while (found := re.search(url, log.read_text())) is None:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"{cmd[:3]} did not start: {log.read_text()[-3000:]}")
            time.sleep(0.05)  # polling the log for the port, not timing
        yield found.group(1)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@dataclass(frozen=True)
class Served:
    """The page's URL (`serve.mjs`) and the service's (`tether serve`)."""

    page: str
    api: str


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    """`tether serve` (port 0) serving the plan-following `planner`, and `serve.mjs` before it."""
    node = node_with("@ag-ui/client")
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT / "tests" / "app_server")]),
        "TETHER_TEST_DIR": str(tmp_path),
    }
    env.pop("TETHER_API_KEYS", None)
    serve = [sys.executable, "-c", "from tether.cli import main; main()", "serve"]
    serve += ["--agents", "svc_agents:agents", "--storage", f"sqlite:///{tmp_path / 's.db'}"]
    serve += ["--port", "0"]
    with _started(serve, env, tmp_path, SERVE_URL.pattern.decode()) as api:
        page = [node, str(EXAMPLE / "serve.mjs"), "--port", "0", "--modules", str(MODULES)]
        with _started(page, {**env, "TETHER_URL": api}, tmp_path, r"page on (http://\S+)") as url:
            yield Served(url, api)


def _send(page: Any, plan: Any) -> None:
    box = page.get_by_role("textbox", name="Message")
    expect(box).to_be_enabled()
    box.fill(plan if isinstance(plan, str) else json.dumps(plan))
    box.press("Enter")


def _runs(tmp_path: Path) -> list[str]:
    path = tmp_path / "runs.log"
    return path.read_text().splitlines() if path.exists() else []


def test_page_streams_asks_and_runs_its_tool(served: Served, ui: UI, tmp_path: Path) -> None:
    page = ui.page(f"{served.page}/?agent=planner")
    bodies: list[dict[str, Any]] = []
    page.on("request", lambda r: bodies.append(r.post_data_json) if r.method == "POST" else None)
    expect(page.locator("#status")).to_have_text("ready")  # @ag-ui/client loaded
    log = page.locator("#log")

    # Text and thinking, streamed: the bubble changes once per word.
    page.evaluate(
        """() => { window.updates = 0; new MutationObserver((ms) => { for (const m of ms)
        if (m.target.classList && m.target.classList.contains('assistant')) window.updates++;
        }).observe(document.getElementById('log'), { childList: true, subtree: true }); }"""
    )
    _send(page, ["!think weighing it|hello from the page"])
    expect(log.locator(".assistant").last).to_have_text("hello from the page ")
    expect(log.locator(".thinking")).to_have_text("weighing it")
    assert page.evaluate("window.updates") >= 4

    # Model text is text, never markup.
    _send(page, '<img src=x onerror="window.pwned=1">')
    expect(log.locator(".assistant").last).to_contain_text(
        'echo: <img src=x onerror="window.pwned=1">'
    )
    assert log.locator("img").count() == 0 and page.evaluate("window.pwned") is None

    # A confirmation answered with Allow: the tool runs and its result is shown.
    _send(page, [[["save_note", {"name": "allowed", "text": "x"}]], "saved it"])
    ask = log.locator(".ask").last
    expect(ask).to_contain_text("save_note")
    ask.get_by_role("button", name="Allow").click()
    expect(log.locator(".tool").last).to_contain_text("→ saved allowed")
    expect(log.locator(".assistant").last).to_have_text("saved it ")

    # One answered with Deny: the run goes on without running it.
    _send(page, [[["save_note", {"name": "denied", "text": "x"}]], "not saved"])
    ask = log.locator(".ask").last
    expect(ask).to_contain_text('"name":"denied"')
    ask.get_by_role("button", name="Deny").click()
    expect(log.locator(".assistant").last).to_have_text("not saved ")
    assert [r for r in _runs(tmp_path) if r.startswith("save_note")] == ["save_note allowed"]

    # The page's own tool: the model calls pick_colour, the user picks, the run resumes.
    _send(page, [[["pick_colour", {"purpose": "the header"}]], "nice colour"])
    card = log.locator("[data-tool=pick_colour]")
    expect(card).to_contain_text("pick a colour for the header")
    card.get_by_label("colour").fill("#008080")
    card.get_by_role("button", name="Use this colour").click()
    expect(log.locator(".assistant").last).to_have_text("nice colour ")
    expect(page.locator("#swatch")).to_have_css("background-color", "rgb(0, 128, 128)")
    last = bodies[-1]
    assert [t["name"] for t in last["tools"]] == ["pick_colour"]
    sent = [m for m in last["messages"] if m["role"] == "tool" and m["content"] == "#008080"]
    assert len(sent) == 1
    stored = httpx.get(f"{served.api}/v1/sessions/{last['threadId']}/messages", timeout=10)
    results = {
        block["name"] + " " + block["state"]: block["output"]
        for message in stored.json()["messages"]
        for block in message["content"]
        if block["type"] == "tool_result"
    }
    assert results["pick_colour success"] == "#008080"
    assert "denied in the browser" in results["save_note denied"]


def test_page_server_keeps_the_origin_rules(served: Served) -> None:
    """`serve.mjs` passes on only same-origin runs, answers only loopback names, and serves
    nothing outside its page and `node_modules`."""
    run = {"threadId": "t", "runId": "r", "messages": [], "tools": [], "context": [],
           "state": {}, "forwardedProps": {}}  # fmt: skip
    with httpx.Client(base_url=served.page, timeout=10) as c:
        other = {"origin": "http://127.0.0.1:1", "sec-fetch-site": "same-site"}
        assert c.post("/v1/ag-ui/planner", json=run, headers=other).status_code == 403
        assert c.get("/", headers={"host": "evil.example"}).status_code == 421
        assert c.get("/node_modules/../serve.mjs").status_code == 404
        assert c.get("/node_modules/%2e%2e/%2e%2e/serve.mjs").status_code == 404
        assert c.get("/serve.mjs").status_code == 404
        assert c.get("/node_modules/%E0%A4%A").status_code == 400
        moved = c.get("/node_modules/rxjs/dist/esm/internal/Observable")
        assert (moved.status_code, moved.headers["location"]) == (
            302,
            "/node_modules/rxjs/dist/esm/internal/Observable.js",
        )
        csp = c.get("/").headers["content-security-policy"]
        assert "script-src 'self' 'sha256-" in csp and "unsafe-inline" not in csp
