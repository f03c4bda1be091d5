"""What every SDK-backed provider shares: credential, defaults, lazy client, error guard."""

from __future__ import annotations

import asyncio
import inspect
import logging
from abc import abstractmethod
from collections.abc import AsyncIterable, AsyncIterator, Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Generic, NoReturn, TypeVar

from tether.credential import CredentialBase
from tether.errors import ModelAuthenticationError, ModelError
from tether.model._base import ChatModelBase
from tether.model._types import ChatRequest, ModelDelta
from tether.model.providers._cache import PromptCache, as_prompt_cache
from tether.model.providers._context import context_length_for
from tether.model.providers._errors import redact, stream_ended, stream_failure
from tether.model.providers._stop import stop_delta

__all__ = ["Opened", "ProviderChatModel"]

logger = logging.getLogger("tether.model")


def _nothing() -> list[ModelDelta]:
    return []


@dataclass(slots=True)
class Opened:
    """A provider call in flight: its chunks, how each becomes deltas, and how it ended.

    `chunks` is the SDK's async stream, or a list holding the one non-streamed response;
    `stopped` gives the provider's finish reason once its end-of-answer marker arrived
    (`None` before: a stream that ends then was cut short); `finish` gives the deltas known
    only at the end (e.g. the last cumulative usage).
    """

    chunks: AsyncIterable[Any] | list[Any]
    convert: Callable[[Any], list[ModelDelta]]
    stopped: Callable[[], str | None]
    finish: Callable[[], list[ModelDelta]] = _nothing


C = TypeVar("C", bound=CredentialBase)


class ProviderChatModel(ChatModelBase, Generic[C]):
    """A chat model reached through a provider SDK.

    Subclasses say which credential they take, build their SDK client in `_make_client`,
    start the call in `_open`, and map SDK exceptions in `_map_error`. The client is built on
    the first call, so constructing a model imports no SDK and needs no network.
    """

    provider: ClassVar[str] = ""
    credential_type: ClassVar[type[CredentialBase]]
    requires_api_key: ClassVar[bool] = True
    limit_hint: ClassVar[str] = "`max_tokens` in `generate_kwargs`"
    """Where the output token limit is raised, for the warning about a cut-short answer."""

    def __init__(
        self,
        credential: C | None,
        model: str,
        *,
        context_length: int | None = None,
        stream: bool = True,
        generate_kwargs: dict[str, Any] | None = None,
        prompt_cache: PromptCache | bool = True,
    ) -> None:
        super().__init__(
            model,
            context_length=context_length or context_length_for(model),
            stream=stream,
        )
        if credential is None:
            credential = self.credential_type()  # type: ignore[assignment]  # reads the env
        if not isinstance(credential, self.credential_type):
            raise TypeError(
                f"{type(self).__name__} takes a {self.credential_type.__name__}, "
                f"got {type(credential).__name__}"
            )
        self.credential: C = credential
        self.generate_kwargs: dict[str, Any] = dict(generate_kwargs or {})
        self.prompt_cache: PromptCache = as_prompt_cache(prompt_cache)
        """Whether (and how) requests ask for prompt caching; see `PromptCache`."""
        self._client: Any = None

    def _api_key(self) -> str | None:
        key = self.credential.get_api_key()
        if key is None and self.requires_api_key:
            raise ModelAuthenticationError(
                f"no {self.provider} API key for model {self.model_name!r}: "
                f"{self.credential.how_to_set()}"
            )
        return key

    @property
    def client(self) -> Any:
        """The SDK client (built on first use, with the SDK's own retries off)."""
        if self._client is None:
            self._client = self._make_client()
        return self._client

    @abstractmethod
    def _make_client(self) -> Any:
        """Build the SDK's async client."""

    @abstractmethod
    async def _open(self, request: ChatRequest) -> Opened:
        """Start the SDK call; say how its chunks become deltas."""

    @abstractmethod
    def _map_error(self, error: BaseException) -> ModelError | None:
        """The tether error for an SDK exception, or `None` if it is not an SDK error."""

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """Call the model and yield its answer as deltas, with errors mapped to `tether.errors`.

        The last delta is a `StopDelta`. A stream that ends without the provider's
        end-of-answer marker raises: `ModelRetryableError` if nothing came yet, else
        `StreamInterruptedError` (a cut-short answer is never passed off as whole).
        """
        # One generator over the SDK stream: every extra async-generator layer costs a
        # few microseconds per chunk, which is most of tether's share of a fast stream.
        started = False
        opened: Opened | None = None
        try:
            opened = await self._open(request)
            convert, chunks = opened.convert, opened.chunks
            if isinstance(chunks, list):
                for chunk in chunks:
                    for delta in convert(chunk):
                        started = True
                        yield delta
            else:
                try:
                    async for chunk in chunks:
                        for delta in convert(chunk):
                            started = True
                            yield delta
                finally:
                    await _close(chunks)  # an early exit must not leave the connection open
        except (asyncio.CancelledError, GeneratorExit):
            raise
        except Exception as error:
            if opened is None or opened.stopped() is None or not self._transient(error):
                self._raise(error, started)
            # The provider had said the answer was whole; a connection lost after that (or
            # a garbled trailer) loses nothing.
            logger.debug("%s stream failed after its end marker: %r", self.provider, error)
        assert opened is not None
        raw = opened.stopped()
        if raw is None:
            self._raise(stream_ended(self.provider), started)
        for delta in opened.finish():
            yield delta
        yield stop_delta(
            raw, provider=self.provider, model=self.model_name, limit_hint=self.limit_hint
        )

    def _transient(self, error: Exception) -> bool:
        failure = stream_failure(error, self._map_error, self.provider, started=False)
        return self.is_retryable(failure)

    def _raise(self, error: Exception, started: bool) -> NoReturn:
        failure = stream_failure(error, self._map_error, self.provider, started=started)
        if redact(failure, self.credential.get_api_key(), error):
            raise failure from None  # the SDK's own message would show the key
        raise failure from (None if failure is error else error)

    async def aclose(self) -> None:
        """Close the SDK client's connections; the next call opens new ones."""
        client, self._client = self._client, None
        if client is None:
            return
        target = getattr(client, "aio", client)  # google-genai keeps its async side on `.aio`
        close = getattr(target, "aclose", None) or getattr(target, "close", None)
        if close is not None:
            result = close()
            if inspect.isawaitable(result):
                await result

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_name!r}>"


async def _close(chunks: Any) -> None:
    """Close an SDK stream (`close()` or `aclose()`, sync or async); never raises."""
    close = getattr(chunks, "aclose", None) or getattr(chunks, "close", None)
    if close is None:
        return
    try:
        result = close()
        if inspect.isawaitable(result):
            await result
    except Exception as error:  # closing is best effort: the answer is already decided
        logger.debug("closing the stream failed: %r", error)
