"""What every `TracingMiddleware` hook reads: its tracer, instruments and options.

The hooks live in one mixin per span (`_tracing_reply`, `_tracing_model`,
`_tracing_tools`); `TracingMiddleware` (`_tracing`) joins them and sets these up.
"""

from __future__ import annotations

from typing import Any

from opentelemetry import trace

from tether.middleware import MiddlewareBase
from tether.tracing._metrics import Instruments

__all__ = ["TracingBase"]


class TracingBase(MiddlewareBase):
    """The state `TracingMiddleware`'s hook mixins share (set by its `__init__`)."""

    _tracer: trace.Tracer
    _metrics: Instruments
    capture_content: bool | None
    _capture_env: bool
    conversation_id: str | None
    provider_name: str | None
    _models: dict[tuple[Any, ...], tuple[str, dict[str, Any], dict[str, Any]]]
    """Per model: its `chat` span name, metric attributes and span start attributes."""
    _agents: dict[tuple[Any, ...], tuple[str, dict[str, Any]]]
    """Per agent and model: its `invoke_agent` span name and start attributes."""

    @property
    def captures_content(self) -> bool:
        """Whether message and tool contents go into spans (the variable is read once)."""
        if self.capture_content is not None:
            return self.capture_content
        return self._capture_env
