"""Middleware: onion hooks around the reply, reasoning, model calls, tools and permissions."""

from typing import TYPE_CHECKING, Any

from tether.middleware._base import MiddlewareBase
from tether.middleware._calls import (
    ActingCall,
    CompressCall,
    ModelCall,
    PermissionCall,
    ReasoningCall,
    ReplyCall,
    SystemPromptCall,
)
from tether.middleware._chain import chain_awaitable, chain_iterator, overrides

if TYPE_CHECKING:  # loaded lazily below; imported here for type checkers and the API docs
    from tether.middleware._tracing import TracingMiddleware

__all__ = [
    "ActingCall",
    "CompressCall",
    "MiddlewareBase",
    "ModelCall",
    "PermissionCall",
    "ReasoningCall",
    "ReplyCall",
    "SystemPromptCall",
    "TracingMiddleware",
    "chain_awaitable",
    "chain_iterator",
    "overrides",
]


def __getattr__(name: str) -> Any:
    # TracingMiddleware needs the `otel` extra: load it (and OpenTelemetry) only when asked.
    if name != "TracingMiddleware":
        raise AttributeError(f"module 'tether.middleware' has no attribute {name!r}")
    try:
        from tether.middleware._tracing import TracingMiddleware
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        raise ImportError(
            "TracingMiddleware needs OpenTelemetry: `pip install 'tether[otel]'` "
            "(and an SDK to export spans, e.g. `opentelemetry-sdk`)"
        ) from exc
    return TracingMiddleware
