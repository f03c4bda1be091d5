"""Map provider failures to `tether.errors`, the same way for every provider."""

from __future__ import annotations

import asyncio
import email.utils
import re
import time
from collections.abc import Callable, Mapping

from tether.errors import (
    ContextOverflowError,
    ModelAuthenticationError,
    ModelError,
    ModelResponseError,
    ModelRetryableError,
    RateLimitError,
    StreamInterruptedError,
)

__all__ = [
    "ErrorMapper",
    "stream_failure",
    "is_transport_error",
    "parse_retry_after",
    "status_error",
]

ErrorMapper = Callable[[BaseException], ModelError | None]
"""Turns an SDK exception into a tether error, or `None` if it is not the SDK's."""

_OVERFLOW = re.compile(
    r"context[ _-]?length|context window|maximum context|prompt is too long|too many tokens"
    r"|input (?:length|token count|is too long)|range of input length|exceeds the maximum"
    r"|reduce the length|too long for the model|prompt too long|max_tokens_exceeded",
    re.IGNORECASE,
)
_TRANSPORT_MODULES = ("httpx", "httpx2", "httpcore", "aiohttp", "h11", "anyio")


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` / `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    millis = lower.get("retry-after-ms")
    if millis:
        try:
            return max(float(millis) / 1000.0, 0.0)
        except ValueError:
            pass
    value = lower.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


def is_context_overflow(message: str, code: str | None = None) -> bool:
    """Whether a provider's error text says the request was too long for the window."""
    return bool(_OVERFLOW.search(message)) or (code or "") in (
        "context_length_exceeded",
        "string_above_max_length",
    )


def status_error(
    *,
    provider: str,
    status: int | None,
    message: str,
    how_to_fix_auth: str,
    code: str | None = None,
    retry_after: float | None = None,
) -> ModelError:
    """The tether error for an HTTP error answer of `provider`."""
    text = f"{provider} API error {status if status is not None else ''}: {message}".replace(
        "  ", " "
    )
    if status == 429:
        return RateLimitError(text, retry_after=retry_after)
    if status in (401, 403):
        return ModelAuthenticationError(
            f"{provider} rejected the credential ({status}: {message}); {how_to_fix_auth}"
        )
    if status in (408, 409, 425, 529) or (status is not None and status >= 500):
        return ModelRetryableError(text, retry_after=retry_after)
    if status == 413 or is_context_overflow(message, code):
        return ContextOverflowError(
            f"{text}; the request is larger than the model's context window: "
            "compress the context (`agent.compress_context()`) or use a model with a larger one"
        )
    return ModelResponseError(text, status_code=status)


def is_transport_error(error: BaseException) -> bool:
    """Whether `error` is a network failure (connection refused or dropped, timeout)."""
    if isinstance(error, ConnectionError | TimeoutError | asyncio.IncompleteReadError | EOFError):
        return True
    for cls in type(error).__mro__:
        module = cls.__module__.split(".")[0]
        if module in _TRANSPORT_MODULES:
            return True
    return False


def _as_model_error(error: Exception, mapper: ErrorMapper, provider: str) -> ModelError:
    if isinstance(error, ModelError):
        return error
    mapped = mapper(error)
    if mapped is not None:
        return mapped
    if is_transport_error(error):
        return ModelRetryableError(f"{provider} connection failed: {type(error).__name__}: {error}")
    return ModelResponseError(f"{provider} call failed: {type(error).__name__}: {error}")


def stream_failure(
    error: Exception, mapper: ErrorMapper, provider: str, *, started: bool
) -> ModelError:
    """The tether error to raise for `error`; after output began, `StreamInterruptedError`."""
    mapped = _as_model_error(error, mapper, provider)
    if started and not isinstance(mapped, StreamInterruptedError):
        return StreamInterruptedError(
            f"the {provider} stream broke after output began ({mapped}); "
            "it is not replayed. Call `reply(None)` to try the step again."
        )
    return mapped
