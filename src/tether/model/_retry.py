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


async def stream_with_retries(
    model: ChatModelBase, request: ChatRequest, policy: RetryPolicy
) -> AsyncIterator[ModelDelta | RetryNotice]:
    """Stream from `model`, retrying transient failures raised before the first delta.

    After the retries run out (or on a non-retryable provider error before any output)
    the fallback model, if any, gets the same treatment. A failure after output began
    raises `StreamInterruptedError`: half an answer is never silently replayed.
    """
    models = [model] if policy.fallback is None else [model, policy.fallback]
    first_failure: BaseException | None = None
    for position, current in enumerate(models):
        next_model = models[position + 1] if position + 1 < len(models) else None
        attempt = 0
        while True:
            attempt += 1
            started = False
            try:
                async for delta in current.stream(request):
                    # usage alone is not output: an error after it may still be retried
                    started = started or not isinstance(delta, UsageDelta | StopDelta)
                    yield delta
                return
            except asyncio.CancelledError:
                raise
            except Exception as error:
                if started:
                    if isinstance(error, StreamInterruptedError):
                        raise
                    raise StreamInterruptedError(
                        f"the stream from {current.model_name!r} broke after output began "
                        f"({type(error).__name__}: {error}); it is not replayed. "
                        "Call `reply(None)` to try the step again."
                    ) from error
                retryable = current.is_retryable(error)
                if retryable and attempt <= policy.max_retries:
                    delay = policy.delay(attempt, current.retry_after(error))
                    yield RetryNotice(current.model_name, attempt, error, delay, current.model_name)
                    await asyncio.sleep(delay)
                    continue
                if next_model is not None and (retryable or _may_fall_back(error)):
                    first_failure = error
                    yield RetryNotice(
                        current.model_name, attempt, error, 0.0, next_model.model_name
                    )
                    break
                if first_failure is not None:
                    error.add_note(
                        f"this is the fallback model's error; {model.model_name!r} failed "
                        f"before it: {type(first_failure).__name__}: {first_failure}"
                    )
                raise
