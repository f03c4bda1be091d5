"""Tracing: `TracingMiddleware`, spans and metrics with the OpenTelemetry GenAI conventions.

A package of its own above the loop: it reads events, model deltas and messages with
their real classes. `TracingMiddleware` needs the `otel` extra and loads on first use
(module `__getattr__`, PEP 562), so `import tether.tracing` alone loads no OpenTelemetry.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # loaded lazily below; imported here for type checkers and the API docs
    from tether.tracing._middleware import TracingMiddleware

__all__ = ["TracingMiddleware"]


def __getattr__(name: str) -> Any:
    if name != "TracingMiddleware":
        raise AttributeError(f"module 'tether.tracing' has no attribute {name!r}")
    try:
        from tether.tracing._middleware import TracingMiddleware
    except ModuleNotFoundError as exc:
        if not (exc.name or "").startswith("opentelemetry"):
            raise
        raise ImportError(
            "TracingMiddleware needs OpenTelemetry: `pip install 'tether[otel]'` "
            "(and an SDK to export spans, e.g. `opentelemetry-sdk`)"
        ) from exc
    globals()[name] = TracingMiddleware
    return TracingMiddleware
