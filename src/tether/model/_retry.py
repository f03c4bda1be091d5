"""Retries with exponential backoff, then a fallback model: the loop sees one stream."""

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

from tether.errors import ContextOverflowError, ModelError, StreamInterruptedError
from tether.model._base import ChatModelBase
from tether.model._types import ChatRequest, ModelDelta, StopDelta, UsageDelta

__all__ = ["RetryNotice", "RetryPolicy", "stream_with_retries"]


_HINT_CAP = 60.0
"""The longest wait a provider's `Retry-After` gets when `max_delay` is shorter."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How often and how patiently to retry, and what to fall back to."""

    max_retries: int = 3
    initial_delay: float = 1.0
    max_delay: float = 30.0
    fallback: ChatModelBase | None = None
    jitter: float = 0.5
    """The share of each backoff drawn at random (`0.5`: between half and all of it), so
    clients that failed together do not retry together; `0` waits the exact backoff."""

    def delay(self, attempt: int, hint: float | None) -> float:
        """Seconds to wait after failed `attempt` (from 1).

        Exponential backoff, jittered, at most `max_delay`; a provider hint (`Retry-After`)
        wins when longer, is not jittered (never earlier than asked), and is capped at
        `max(max_delay, 60)` so one hint cannot stall a reply for an hour.
        """
        doubling = float(2 ** min(attempt - 1, 62))  # no float overflow after many attempts
        backoff: float = min(self.initial_delay * doubling, self.max_delay)
        if self.jitter > 0 and backoff > 0:
            backoff *= 1.0 - min(self.jitter, 1.0) * random.random()
        if hint is not None:
            return float(min(max(hint, backoff), max(self.max_delay, _HINT_CAP)))
        return backoff


@dataclass(frozen=True, slots=True)
class RetryNotice:
    """Yielded between attempts: which model failed, why, and what comes next."""

    model_name: str
    attempt: int
    error: BaseException
    delay: float
    next_model_name: str


def _may_fall_back(error: BaseException) -> bool:
    return isinstance(error, ModelError) and not isinstance(
        error, ContextOverflowError | StreamInterruptedError
    )


def stream_with_retries(
    model: ChatModelBase, request: ChatRequest, policy: RetryPolicy
) -> AsyncIterator[ModelDelta | RetryNotice]:
    """Stream from `model`, retrying transient failures raised before the first delta.

    After the retries run out (or on a non-retryable provider error before any output)
    the fallback model, if any, gets the same treatment. A failure after output began
    raises `StreamInterruptedError`: half an answer is never silently replayed. Closing
    the stream (`aclose`) closes the provider's stream at once.
    """
    return _RetryingStream(model, request, policy)


class _RetryingStream:
    """`stream_with_retries`' iterator, an object rather than an async generator.

    The common case (the first attempt works) costs one `await` per delta and no
    generator of its own.
    """

    __slots__ = (
        "_attempt",
        "_done",
        "_first_failure",
        "_models",
        "_policy",
        "_position",
        "_request",
        "_started",
        "_stream",
        "_wait",
    )

    def __init__(self, model: ChatModelBase, request: ChatRequest, policy: RetryPolicy) -> None:
        self._models = (model,) if policy.fallback is None else (model, policy.fallback)
        self._request, self._policy = request, policy
        self._position, self._attempt = 0, 1
        self._stream: AsyncIterator[ModelDelta] | None = None
        self._started, self._done = False, False
        self._wait: float | None = None  # the backoff before the next attempt (notice given)
        self._first_failure: BaseException | None = None

    def __aiter__(self) -> _RetryingStream:
        return self

    async def __anext__(self) -> ModelDelta | RetryNotice:
        if self._done:
            raise StopAsyncIteration
        if self._wait is not None:
            delay, self._wait = self._wait, None
            await asyncio.sleep(delay)
        current = self._models[self._position]
        try:
            if self._stream is None:
                self._stream = current.stream(self._request)
            delta = await self._stream.__anext__()
        except StopAsyncIteration:
            self._done = True
            raise
        except asyncio.CancelledError:
            raise
        except Exception as error:
            self._stream = None
            notice = self._after_failure(current, error)
            if notice is None:
                self._done = True
                raise
            return notice
        # usage alone is not output: an error after it may still be retried
        if not self._started and not isinstance(delta, UsageDelta | StopDelta):
            self._started = True
        return delta

    def _after_failure(self, current: ChatModelBase, error: Exception) -> RetryNotice | None:
        """The notice of the next attempt (a retry or the fallback), or None: re-raise."""
        if self._started:
            self._done = True
            if isinstance(error, StreamInterruptedError):
                return None
            raise StreamInterruptedError(
                f"the stream from {current.model_name!r} broke after output began "
                f"({type(error).__name__}: {error}); it is not replayed. "
                "Call `reply(None)` to try the step again."
            ) from error
        policy, attempt = self._policy, self._attempt
        retryable = current.is_retryable(error)
        if retryable and attempt <= policy.max_retries:
            delay = policy.delay(attempt, current.retry_after(error))
            self._attempt, self._wait = attempt + 1, delay
            return RetryNotice(current.model_name, attempt, error, delay, current.model_name)
        position = self._position + 1
        if position < len(self._models) and (retryable or _may_fall_back(error)):
            self._first_failure = error
            self._position, self._attempt = position, 1
            return RetryNotice(
                current.model_name, attempt, error, 0.0, self._models[position].model_name
            )
        if self._first_failure is not None:
            first = self._first_failure
            error.add_note(
                f"this is the fallback model's error; {self._models[0].model_name!r} failed "
                f"before it: {type(first).__name__}: {first}"
            )
        return None

    async def aclose(self) -> None:
        """Stop: the provider's stream is closed now."""
        self._done = True
        stream, self._stream = self._stream, None
        close = getattr(stream, "aclose", None)
        if close is not None:
            await close()
