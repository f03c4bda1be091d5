"""The web UI's static folder served on its own (no API), for tests of single modules."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tether.app.web import STATIC_DIR

BLANK = "<!doctype html><html lang=en><head><meta charset=utf-8><title>t</title></head><body></body></html>"


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def static_site() -> Iterator[str]:
    """Serve `STATIC_DIR` on 127.0.0.1 (port 0); yields the base URL."""
    handler = partial(_Quiet, directory=str(STATIC_DIR))
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def blank_page(ui: Any, base: str) -> Any:
    """A blank HTML page on the static site's origin (modules import from it)."""
    page = ui.context.new_page()
    ui.errors.watch(page)
    ui.pages.append(page)
    page.route(
        f"{base}/blank.html",
        lambda route: route.fulfill(body=BLANK, content_type="text/html; charset=utf-8"),
    )
    page.goto(f"{base}/blank.html")
    return page
