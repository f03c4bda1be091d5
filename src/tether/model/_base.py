"""`ChatModelBase`: the one thing a provider implements."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator

from tether.errors import ModelRetryableError
from tether.model._types import ChatRequest, ChatResponse, ModelDelta

__all__ = ["ChatModelBase"]


class ChatModelBase(ABC):
    """A chat model. Providers implement `stream`; everything else has a default.

    `stream` yields `ModelDelta`s; non-streaming providers yield their whole answer as
    a few deltas. Errors must be `tether.errors.ModelError`s (or `TimeoutError` /
    `ConnectionError`, which count as retryable).
    """

    def __init__(self, model_name: str, *, context_length: int = 128_000, stream: bool = True):
        self.model_name = model_name
        self.context_length = context_length
        self.stream_enabled = stream

    @abstractmethod
    def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """Call the model and yield its answer as deltas."""

    def is_retryable(self, error: BaseException) -> bool:
        """Whether `error` is transient (rate limit, 5xx, timeout, dropped connection)."""
        return isinstance(error, ModelRetryableError | TimeoutError | ConnectionError)

    def retry_after(self, error: BaseException) -> float | None:
        """The provider's hint, in seconds, of when to retry."""
        return getattr(error, "retry_after", None)

    def count_tokens(self, text: str) -> int | None:
        """An exact token count for `text`, if this model can give one cheaply."""
        return None

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Call the model and return the whole answer."""
        from tether.model._assembler import StreamAssembler

        assembler = StreamAssembler(reply_id="", emit=False)
        async for delta in self.stream(request):
            assembler.feed(delta)
        assembler.close()
        return assembler.response(self.model_name)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.model_name!r}>"
