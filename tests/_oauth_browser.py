"""The browser's part of an OAuth login in tests of `tether serve` bound to port 0.

An OAuth redirect URI is fixed when the agents are imported, before the service has bound
its port, so the tests give the service's public URL as `PUBLIC` (what a load balancer
would answer) and deliver the authorization server's redirect to the worker they choose.
"""

from __future__ import annotations

import httpx

PUBLIC = "http://tether.invalid"
"""The service's public URL in the tests' agents (never resolved)."""


def follow_login(url: str, worker: str) -> httpx.Response:
    """Follow the authorization page's redirects, `PUBLIC`'s to `worker`; the last answer."""
    while True:
        response = httpx.get(url, timeout=30)
        if not response.is_redirect or response.next_request is None:
            return response
        url = str(response.next_request.url)
        if url.startswith(PUBLIC):
            url = worker + url.removeprefix(PUBLIC)
