"""A page on another origin, in a real Chromium, can neither frame the UI nor change state.

The attacker is a second HTTP server on another port of 127.0.0.1: a different origin but
the same site, so its requests carry `Sec-Fetch-Site: same-site` and its own `Origin`.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest
from webui import UI, Server

try:
    from playwright.sync_api import expect
except ImportError:  # the `browser` fixture skips (or fails with TETHER_REQUIRE_CHROMIUM=1)
    expect = None

BLOCKED = [
    r"Refused to (frame|display)",
    r"frame-ancestors",
    r"X-Frame-Options",
    r"status of 403",
    r"ERR_BLOCKED_BY_RESPONSE",
]


class Site:
    """A plain HTTP server on a port-0 socket of 127.0.0.1 serving fixed HTML pages."""

    def __init__(self, pages: dict[str, str]) -> None:
        self.pages = pages
        site = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                body = site.pages.get(self.path, "not here").encode()
                self.send_response(200 if self.path in site.pages else 404)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Site:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join(timeout=10)


@pytest.fixture
def sessions(server: Server) -> Iterator[dict[str, str]]:
    """An idle session and one paused on a confirmation, made by a program (no Origin)."""
    with httpx.Client(base_url=server.url, timeout=30) as c:
        made = {}
        for name in ("idle", "paused"):
            r = c.post("/v1/sessions", json={"agent_id": "helper"})
            made[name] = r.json()["session_id"]
        text = {"input": {"role": "user", "content": "first the mode switch, asking"}}
        r = c.post(f"/v1/sessions/{made['paused']}/replies", json=text)
        assert r.json()["status"] == "awaiting_confirmation", r.text
        yield made
        for sid in made.values():
            c.post(f"/v1/sessions/{sid}/interrupt")


def _state(server: Server, ids: dict[str, str]) -> Any:
    with httpx.Client(base_url=server.url, timeout=30) as c:
        listing = sorted(s["session_id"] for s in c.get("/v1/sessions").json()["sessions"])
        views = {n: c.get(f"/v1/sessions/{sid}").json() for n, sid in ids.items()}
        talk = {n: c.get(f"/v1/sessions/{sid}/messages").json() for n, sid in ids.items()}
        return listing, views, talk


def _attack_page(ui_url: str, ids: dict[str, str]) -> str:
    message = json.dumps({"input": {"role": "user", "content": "hello from another site"}})
    shots = [
        (f"/v1/sessions/{ids['idle']}/replies", "text", message),
        (f"/v1/sessions/{ids['idle']}/replies", "json-blob", message),
        (f"/v1/sessions/{ids['paused']}/interrupt", "none", None),
        ("/v1/sessions", "json-blob", json.dumps({"agent_id": "helper", "session_id": "evil"})),
    ]
    return f"""<!doctype html><title>attacker</title><link rel="icon" href="data:,">
<iframe id="ui" src="{ui_url}/"></iframe>
<iframe id="own" src="/inner"></iframe>
<iframe name="sink" id="sink"></iframe>
<form id="csrf" method="POST" target="sink" enctype="text/plain"
      action="{ui_url}/v1/sessions/{ids["paused"]}/interrupt"><input name="a" value="b"></form>
<script>
const loaded = (id) => new Promise((ok) => document.getElementById(id).addEventListener("load", ok));
const base = {json.dumps(ui_url)};
const shots = {json.dumps(shots)};
async function attack() {{
  await Promise.all([loaded("ui"), loaded("own")]);
  const results = [];
  for (const [path, kind, body] of shots) {{
    const init = {{method: "POST", mode: "no-cors"}};
    if (kind === "text") init.body = body;
    if (kind === "json-blob") init.body = new Blob([body], {{type: "application/json"}});
    try {{ await fetch(base + path, init); results.push("sent"); }}
    catch (e) {{ results.push("failed: " + e); }}
  }}
  const sank = loaded("sink");
  document.getElementById("csrf").submit();
  await sank;
  document.title = "done " + results.join(",");
}}
attack();
</script>"""


def test_another_origin_cannot_frame_the_ui_nor_start_a_reply(
    ui: UI, server: Server, sessions: dict[str, str]
) -> None:
    for pattern in BLOCKED:
        ui.errors.allow(pattern)
    before = _state(server, sessions)
    assert before[1]["paused"]["status"] == "awaiting_confirmation"
    log_start = server.log.stat().st_size if server.log else 0
    pages = {"/": _attack_page(server.url, sessions), "/inner": "<p>attacker content</p>"}
    with Site(pages) as site:
        page = ui.page(site.url)
        expect(page).to_have_title("done sent,sent,sent,sent", timeout=20_000)
        expect(page.frame_locator("#own").get_by_text("attacker content")).to_be_visible()
        framed = page.frame_locator("#ui")
        expect(framed.get_by_role("button", name="New session")).to_have_count(0)
        expect(framed.locator("body")).not_to_contain_text("tether")
        frames = {f.name: f.url for f in page.frames}
        assert frames["ui"] == "chrome-error://chromewebdata/"  # the browser's blank page
        assert frames["own"] == f"{site.url}/inner"
    assert _state(server, sessions) == before  # no reply ran, nothing was interrupted
    assert server.log is not None
    log = server.log.read_bytes()[log_start:].decode(errors="replace")
    paths = [
        f"/v1/sessions/{sessions['idle']}/replies",
        f"/v1/sessions/{sessions['paused']}/interrupt",
    ]
    for path in paths:  # the requests reached the service and it refused them
        assert f'"POST {path} HTTP/1.1" 403' in log, log[-3000:]
    assert '"GET / HTTP/1.1" 200' in log  # the framed UI was served, then not shown


@pytest.fixture(scope="module")
def rebinding_browser(browser: Any) -> Iterator[Any]:
    """A Chromium whose DNS answers 127.0.0.1 for `evil.example` (a rebound name)."""
    from webui import CHROMIUM, CHROMIUM_ARGS

    rule = "--host-resolver-rules=MAP evil.example 127.0.0.1"
    other = browser.browser_type.launch(executable_path=CHROMIUM, args=[*CHROMIUM_ARGS, rule])
    yield other
    other.close()


def test_a_rebound_name_reaches_nothing(
    rebinding_browser: Any, server: Server, sessions: dict[str, str]
) -> None:
    before = _state(server, sessions)
    context = rebinding_browser.new_context()
    try:
        page = context.new_page()
        port = server.url.rsplit(":", 1)[1]
        response = page.goto(f"http://evil.example:{port}/")
        assert response is not None and response.status == 421
        assert "UntrustedHostError" in page.content()
        expect(page.get_by_role("button", name="New session")).to_have_count(0)
        statuses = page.evaluate(
            """async ([idle, paused]) => {
                const post = (path, body) => fetch(path, {
                    method: "POST", headers: {"Content-Type": "application/json"},
                    body: body === undefined ? undefined : JSON.stringify(body)});
                const hello = {input: {role: "user", content: "hello from a rebound name"}};
                const all = [
                    await fetch("/v1/sessions"),
                    await post("/v1/sessions", {agent_id: "helper", session_id: "evil"}),
                    await post(`/v1/sessions/${idle}/replies`, hello),
                    await post(`/v1/sessions/${paused}/interrupt`),
                    await fetch(`/v1/sessions/${idle}`, {method: "PATCH",
                        headers: {"Content-Type": "application/json"},
                        body: JSON.stringify({permission_mode: "bypass"})}),
                ];
                return all.map((r) => r.status);
            }""",
            [sessions["idle"], sessions["paused"]],
        )
        assert statuses == [421] * 5
    finally:
        context.close()
    assert _state(server, sessions) == before


def test_a_mode_above_the_ceiling_is_refused_in_the_ui(ui: UI, server: Server) -> None:
    from webui import open_chat

    ui.errors.allow(r"status of 403")  # the browser's own log of the refused PATCH
    page = open_chat(ui, server)
    mode = page.get_by_role("combobox", name="Permission mode")
    expect(mode).to_have_value("default")
    with page.expect_response(lambda r: r.request.method == "PATCH") as patched:
        mode.select_option("bypass")
    assert patched.value.status == 403
    expect(page.get_by_role("alert")).to_contain_text("above this service's ceiling")
    sid = page.url.split("#/s/")[1]
    stored = httpx.get(f"{server.url}/v1/sessions/{sid}", timeout=10).json()
    assert stored["permission_mode"] == "default"
    page.reload()
    expect(page.get_by_role("combobox", name="Permission mode")).to_have_value("default")
