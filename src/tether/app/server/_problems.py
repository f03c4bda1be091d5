"""Errors as HTTP answers: one JSON problem body per failure, and the body size limit.

A problem body is `{"type": "<tether error class>", "detail": "<its message>", "status":
<code>}`, plus `reply_id` for a busy session; `type` is the name of the `tether.errors`
class a library caller would catch, so clients branch on the same names.
"""

from __future__ import annotations

from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether.errors import (
    AuthenticationError,
    ConfigError,
    InvalidInputError,
    ReplyInProgressError,
    RequestTooLargeError,
    ResumeError,
    RuleTooBroadError,
    ServiceError,
    SessionConflictError,
    SessionInputError,
    SessionNotFoundError,
    StateVersionError,
    StorageUnavailableError,
    TetherError,
    UnknownAgentError,
)

__all__ = ["BodyLimit", "install_problem_handlers", "problem"]

_STATUS: tuple[tuple[type[TetherError], int], ...] = (
    (AuthenticationError, 401),
    (SessionNotFoundError, 404),
    (UnknownAgentError, 404),
    (ReplyInProgressError, 409),
    (SessionConflictError, 409),
    (RuleTooBroadError, 422),
    (ResumeError, 409),
    (RequestTooLargeError, 413),
    (InvalidInputError, 422),
    (SessionInputError, 422),
    (ConfigError, 422),
    (StateVersionError, 422),
    (StorageUnavailableError, 503),
    (ServiceError, 503),  # ServiceClosingError and other refusals of the service itself
)


def status_of(exc: TetherError) -> int:
    """The HTTP status for a tether error (500 for one no caller can cause)."""
    for cls, code in _STATUS:
        if isinstance(exc, cls):
            return code
    return 500


def problem(status: int, type_: str, detail: str, **extra: Any) -> JSONResponse:
    """A JSON problem response."""
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    body = {"type": type_, "detail": detail, "status": status, **extra}
    return JSONResponse(
        body, status_code=status, headers=headers, media_type="application/problem+json"
    )


def install_problem_handlers(app: FastAPI) -> None:
    """Turn tether errors, validation errors and HTTP errors into problem bodies."""

    async def on_tether(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, TetherError)
        extra: dict[str, Any] = {}
        if isinstance(exc, ReplyInProgressError):
            extra["reply_id"] = exc.reply_id
        return problem(status_of(exc), type(exc).__name__, str(exc), **extra)

    async def on_invalid(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, RequestValidationError)
        errors = exc.errors()
        parts = [
            f"{'.'.join(str(p) for p in e.get('loc', ()))}: {e.get('msg', '')}" for e in errors[:5]
        ]
        detail = "the request is not valid: " + "; ".join(parts)
        return problem(422, "InvalidInputError", detail)

    async def on_http(request: Request, exc: Exception) -> JSONResponse:
        assert isinstance(exc, HTTPException)
        return problem(exc.status_code, "HTTPError", str(exc.detail))

    app.add_exception_handler(TetherError, on_tether)
    app.add_exception_handler(RequestValidationError, on_invalid)
    app.add_exception_handler(HTTPException, on_http)


class BodyLimit:
    """ASGI middleware: refuse request bodies over `max_bytes` with a 413 problem."""

    def __init__(self, app: ASGIApp, max_bytes: int) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or ()).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > self.max_bytes):
            await self._refuse(scope, receive, send)
            return
        seen = 0

        async def counted() -> Message:
            nonlocal seen
            message = await receive()
            if message["type"] == "http.request":
                seen += len(message.get("body", b""))
                if seen > self.max_bytes:
                    raise _TooLarge
            return message

        try:
            await self.app(scope, counted, send)
        except _TooLarge:
            await self._refuse(scope, receive, send)

    async def _refuse(self, scope: Scope, receive: Receive, send: Send) -> None:
        detail = (
            f"the request body is over the limit of {self.max_bytes} bytes; send less, or "
            "start the service with a larger `max_body_bytes`"
        )
        response = problem(413, RequestTooLargeError.__name__, detail)
        await response(scope, receive, send)


class _TooLarge(Exception):
    pass
