"""Bounds on what a request may carry: the body's size (chunked or not), an event cursor."""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether.app.server._problems import problem
from tether.errors import InvalidInputError, RequestTooLargeError

__all__ = ["MAX_EVENT_ID", "BodyLimit", "event_id"]

MAX_EVENT_ID = 2**53
"""The largest event sequence number a cursor may name (what JSON numbers hold exactly)."""


def event_id(value: str, *, name: str = "Last-Event-ID") -> int:
    """An event cursor sent as text: ASCII digits, 0 to 2**53; `InvalidInputError` else."""
    text = value.strip(" \t")
    if not (text.isascii() and text.isdigit()) or len(text) > 20 or int(text) > MAX_EVENT_ID:
        raise InvalidInputError(
            f"{name} must be an event's sequence number (ASCII digits, 0 to {MAX_EVENT_ID}), "
            f"got {value[:40]!r}{'...' if len(value) > 40 else ''}"
        )
    return int(text)


class BodyLimit:
    """ASGI middleware: a request body over `max_bytes` gets a 413 problem.

    A declared `Content-Length` over the limit is refused before reading; any other body
    (chunked included) is read up to the limit first and handed on whole, so the refusal
    comes from here and never as the app's own "cannot parse the body" answer.
    """

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        declared = headers.get(b"content-length")
        if declared is None and b"transfer-encoding" not in headers:
            await self.app(scope, receive, send)  # no body
            return
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(scope, receive, send)
            return
        first = await self._read(receive)
        if first is None:
            await self._refuse(scope, receive, send)
            return
        given = False

        async def replay() -> Message:
            nonlocal given
            if given:
                return await receive()
            given = True
            return first

        await self.app(scope, replay, send)

    async def _read(self, receive: Receive) -> Message | None:
        """The whole body as one message (or the disconnect); None past the limit."""
        body = bytearray()
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return message
            body += message.get("body", b"")
            if len(body) > self.max_bytes:
                return None
            if not message.get("more_body", False):
                return {"type": "http.request", "body": bytes(body), "more_body": False}

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = (
            f"the request body is over the limit of {self.max_bytes} bytes; send less, or "
            "start the service with a larger `max_body_bytes`"
        )
        response = problem(413, RequestTooLargeError.__name__, detail)
        await response(scope, receive, send)
