"""Map provider failures to `tether.errors`, the same way for every provider."""

from __future__ import annotations

import asyncio
import email.utils
import json
import math
import re
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

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
    "is_transport_error",
    "loaded_sdk",
    "parse_retry_after",
    "redact",
    "status_error",
    "stream_ended",
    "stream_failure",
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


def loaded_sdk(module: str) -> Any:
    """The SDK module if it is already imported, else `None`; never imports it.

    An error mapper must not import its SDK: when the SDK is missing, the error to map is
    the `MissingProviderError` itself, and importing again would bury it under a bare
    `ModuleNotFoundError`. An exception raised by the SDK means the module is loaded.
    """
    return sys.modules.get(module)


def parse_retry_after(headers: Mapping[str, str] | None) -> float | None:
    """Seconds to wait from `retry-after-ms` / `retry-after` (seconds or an HTTP date)."""
    if not headers:
        return None
    lower = {k.lower(): v for k, v in headers.items()}
    millis = _seconds(lower.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000.0
    value = lower.get("retry-after")
    if not value:
        return None
    seconds = _seconds(value)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": UTC by RFC 5322, but Python reads it as local time
        return None
    return max(when.timestamp() - time.time(), 0.0)


def _seconds(text: str | None) -> float | None:
    """A finite, non-negative number of seconds from a header value, else `None`."""
    if not text:
        return None
    try:
        value = float(text)
    except ValueError:
        return None
    return max(value, 0.0) if math.isfinite(value) else None


def is_context_overflow(message: str, code: str | None = None) -> bool:
    """Whether a provider's error text says the request was too long for the window."""
    return bool(_OVERFLOW.search(message)) or (code or "") in (
        "context_length_exceeded",
        "string_above_max_length",
    )


_RETRIED = (
    "tether retries it with backoff (`ModelConfig(max_retries=...)`); if it persists, "
    "set `ModelConfig(fallback_model=...)`"
)


def status_error(
    *,
    provider: str,
    status: int | None,
    message: str,
    how_to_fix_auth: str,
    code: str | None = None,
    retry_after: float | None = None,
    model: str | None = None,
) -> ModelError:
    """The tether error for an HTTP error answer of `provider`; its message says what to do."""
    text = f"{provider} API error {status if status is not None else ''}: {message}".replace(
        "  ", " "
    )
    if status == 429:
        return RateLimitError(
            f"{text}; the rate limit or quota is exhausted: {_RETRIED}, or lower the request rate",
            retry_after=retry_after,
        )
    if status in (401, 403):
        return ModelAuthenticationError(
            f"{provider} rejected the credential ({status}: {message}); {how_to_fix_auth}"
        )
    if status in (408, 409, 425, 529) or (status is not None and status >= 500):
        return ModelRetryableError(
            f"{text}; a transient {provider} failure: {_RETRIED}", retry_after=retry_after
        )
    if status == 413 or is_context_overflow(message, code):
        return ContextOverflowError(
            f"{text}; the request is larger than the model's context window: "
            "compress the context (`agent.compress_context()`) or use a model with a larger one"
        )
    if status == 404:
        name = f" {model!r}" if model else ""
        return ModelResponseError(
            f"{text}; check the model name{name} and the base URL", status_code=status
        )
    return ModelResponseError(
        f"{text}; {provider} refused the request: fix what it names (a model parameter, "
        "`generate_kwargs`, a tool schema or a message)",
        status_code=status,
    )


def is_transport_error(error: BaseException) -> bool:
    """Whether `error` is a network failure (connection refused or dropped, timeout)."""
    if isinstance(error, ConnectionError | TimeoutError | asyncio.IncompleteReadError | EOFError):
        return True
    for cls in type(error).__mro__:
        module = cls.__module__.split(".")[0]
        if module in _TRANSPORT_MODULES:
            return True
    return False


def _is_malformed(error: BaseException) -> bool:
    """Whether `error` (or what caused it) is a JSON payload the SDK could not parse."""
    seen: BaseException | None = error
    for _ in range(4):
        if seen is None:
            return False
        if isinstance(seen, json.JSONDecodeError):
            return True
        seen = seen.__cause__ or seen.__context__
    return False


def _as_model_error(error: Exception, mapper: ErrorMapper, provider: str) -> ModelError:
    if isinstance(error, ModelError):
        return error
    if _is_malformed(error):
        # A garbled event is the server's fault, like a 502: worth another try.
        return ModelRetryableError(
            f"{provider} sent a response that could not be parsed ({type(error).__name__}: "
            f"{error}); {_RETRIED}. If it keeps happening, check that the base URL points "
            f"at a {provider}-compatible API"
        )
    mapped = mapper(error)
    if mapped is not None:
        return mapped
    if is_transport_error(error):
        return ModelRetryableError(f"{provider} connection failed: {type(error).__name__}: {error}")
    return ModelResponseError(f"{provider} call failed: {type(error).__name__}: {error}")


def stream_ended(provider: str) -> ModelRetryableError:
    """The error for a stream that ended cleanly without the provider's end-of-answer marker."""
    return ModelRetryableError(
        f"the {provider} stream ended before the model finished its answer (no end-of-answer "
        f"marker came: a proxy or the server closed it early); {_RETRIED}"
    )


def stream_failure(
    error: Exception, mapper: ErrorMapper, provider: str, *, started: bool
) -> ModelError:
    """The tether error to raise for `error`; after output began, `StreamInterruptedError`."""
    mapped = _as_model_error(error, mapper, provider)
    if started and not isinstance(mapped, StreamInterruptedError):
        return StreamInterruptedError(
            f"the {provider} stream broke after output began ({_without_advice(str(mapped))}); "
            "it is not replayed. Call `reply(None)` to try the step again."
        )
    return mapped


def _without_advice(text: str) -> str:
    """The message without the retry advice, which does not apply once output began."""
    for marker in ("; the rate limit or quota", "; a transient ", f"; {_RETRIED}"):
        cut = text.find(marker)
        if cut != -1:
            text = text[:cut]
    return text


_SHORTEST_SECRET = 8
"""Shorter keys are placeholders (`"k"`, `"EMPTY"`): replacing them would garble messages."""


def redact(error: ModelError, secret: str | None, source: BaseException | None = None) -> bool:
    """Replace `secret` in `error`'s message; whether it was there or in `source`'s."""
    if not secret or len(secret) < _SHORTEST_SECRET:
        return False
    if secret not in str(error):
        return source is not None and secret in str(source)
    error.args = tuple(
        a.replace(secret, "[redacted]") if isinstance(a, str) else a for a in error.args
    )
    return True
