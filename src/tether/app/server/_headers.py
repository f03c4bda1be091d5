"""Security headers on every response: no framing, no sniffing, no referrer, a strict CSP.

The web UI loads only its own files (scripts as modules, one stylesheet, a `data:` icon)
and talks only to its own origin, so `default-src 'self'` holds it; `frame-ancestors
'none'` (and `X-Frame-Options: DENY` for older browsers) keeps other pages from framing it.
FastAPI's own API docs pages load their scripts from a CDN: they get only the framing part.
"""

from __future__ import annotations

from collections.abc import Iterable

from starlette.types import ASGIApp, Message, Receive, Scope, Send

__all__ = ["CONTENT_SECURITY_POLICY", "SecurityHeaders"]

CONTENT_SECURITY_POLICY = (
    "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)
"""The policy of the web UI and of every API response."""

_DOCS_POLICY = "frame-ancestors 'none'; object-src 'none'; base-uri 'none'"

_COMMON = (
    (b"x-frame-options", b"DENY"),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
)


class SecurityHeaders:
    """ASGI middleware: add the security headers to every HTTP response that lacks them.

    `docs_paths` (FastAPI's `/docs`, `/redoc`) get a policy without `default-src`.
    """

    def __init__(self, app: ASGIApp, docs_paths: Iterable[str] = ()) -> None:
        self.app = app
        self.docs_paths = frozenset(p for p in docs_paths if p)
        self._main = (b"content-security-policy", CONTENT_SECURITY_POLICY.encode())
        self._docs = (b"content-security-policy", _DOCS_POLICY.encode())

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        policy = self._docs if scope.get("path") in self.docs_paths else self._main
        added = (policy, *_COMMON)

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers") or ())
                present = {name.lower() for name, _ in headers}
                headers += [(n, v) for n, v in added if n not in present]
                message = {**message, "headers": headers}
            await send(message)

        await self.app(scope, receive, sending)
