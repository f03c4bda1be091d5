"""Errors as HTTP answers: one JSON problem body per failure.

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

from tether.errors import (
    AuthenticationError,
    ConfigError,
    CrossSiteRequestError,
    InvalidInputError,
    PermissionCeilingError,
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
    UntrustedHostError,
)

__all__ = ["install_problem_handlers", "problem", "status_of"]

_STATUS: tuple[tuple[type[TetherError], int], ...] = (
    (AuthenticationError, 401),
    (SessionNotFoundError, 404),
    (UnknownAgentError, 404),
    (ReplyInProgressError, 409),
    (SessionConflictError, 409),
    (RuleTooBroadError, 422),
    (ResumeError, 409),
    (RequestTooLargeError, 413),
    (UntrustedHostError, 421),
    (CrossSiteRequestError, 403),
    (PermissionCeilingError, 403),
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
