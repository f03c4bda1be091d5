"""`TracingMiddleware`: OpenTelemetry spans, metrics and logs in the GenAI vocabulary.

Spans: `invoke_agent {agent}` (INTERNAL) around a reply stream, `chat {model}` (CLIENT)
around each model call (retries and fallback included), `execute_tool {tool}` (INTERNAL)
around each tool call (a denied call gets a zero-length one), `compress_context`
(INTERNAL) around a compression. The reply's span is current only while one of its steps
runs: it is attached before the loop is asked for the next event and detached before the
event is handed on, so nothing leaks into the caller between events, and concurrent tool
calls (each in its own task) parent to it.

A paused reply's span ends with `tether.reply.outcome="paused"` (status unset: a pause
is not an error); its trace and span ids are kept in the reply message's
`metadata["trace"]`, which travels with the saved state, so the reply resumed in
another process links to it.

The hooks are one mixin per span: `_tracing_reply` (`invoke_agent`), `_tracing_model`
(`chat`), `_tracing_tools` (`execute_tool`); the compression span is here.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Awaitable, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.metrics import _internal as metrics_api
from opentelemetry.trace import SpanKind

from tether import __version__
from tether._log import get_logger
from tether.middleware import CompressCall
from tether.tracing._metrics import (
    GLOBALS_READABLE,
    Instruments,
    ProviderSwitch,
    env_provider,
    metrics_switch,
)
from tether.tracing._model import ModelHooks
from tether.tracing._parts import record_error
from tether.tracing._reply import ReplyHooks
from tether.tracing._tools import ToolHooks

__all__ = ["TracingMiddleware"]

_CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_reply_log = get_logger("reply")
_logs_on = _reply_log.isEnabledFor
_INFO = logging.INFO


class TracingMiddleware(ReplyHooks, ModelHooks, ToolHooks):
    """Traces, metrics and structured logs of every reply, model call and tool call.

    Install it first (outermost) so its spans cover the other middlewares' work:
    `Agent(..., middlewares=[TracingMiddleware()])`. It does nothing (and costs next to
    nothing) until an OpenTelemetry SDK tracer or meter provider is set, globally or
    here, or the `tether` loggers are on (`TETHER_LOG=info`).

    Message and tool contents are recorded only when `capture_content=True`, or when it
    is left `None` and `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` when
    the middleware is made. Whatever is recorded passes `tether._log.redact` first.
    `conversation_id` sets `gen_ai.conversation.id` (default: the state's `session_id`);
    `provider_name` overrides `gen_ai.provider.name`.
    """

    watches_all_events = False
    passes_through = True
    """Its hooks pass the call on unchanged, yield exactly what `call_next` yields and close
    that stream when they end early (read by the chain to nest it without a closing layer)."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: Any | None = None,
        capture_content: bool | None = None,
        conversation_id: str | None = None,
        provider_name: str | None = None,
    ) -> None:
        self._tracing_on = ProviderSwitch(
            tracer_provider,
            trace,
            "_TRACER_PROVIDER",
            trace.get_tracer_provider,
            (trace.ProxyTracerProvider, trace.NoOpTracerProvider),
        )
        self._metrics_on = metrics_switch(meter_provider)
        # Neither provider given nor named by env: only the API globals can turn it on.
        self._globals_only = (
            tracer_provider is None
            and meter_provider is None
            and not env_provider()
            and GLOBALS_READABLE
        )
        self._always_on = (tracer_provider is not None and self._tracing_on()) or (
            meter_provider is not None and self._metrics_on()
        )
        self._tracer = trace.get_tracer("tether", __version__, tracer_provider=tracer_provider)
        self._metrics = Instruments(meter_provider, __version__)
        self.capture_content = capture_content
        self._capture_env = os.environ.get(_CAPTURE_ENV, "").strip().lower() == "true"
        self.conversation_id = conversation_id
        self.provider_name = provider_name
        self._models = {}
        self._agents = {}

    @property
    def is_active(self) -> bool:
        """Whether spans, metrics or logs go anywhere now (asked at every hook: cheap)."""
        # The loop asks ~11 times a reply: the common "nothing set up" is two loads and
        # the loggers' cached answer, with no call of our own.
        if self._globals_only:
            if trace._TRACER_PROVIDER is None and metrics_api._METER_PROVIDER is None:
                return _logs_on(_INFO)
        elif self._always_on:  # a live provider was given: that never changes
            return True
        return self._tracing_on() or self._metrics_on() or _logs_on(_INFO)

    async def on_compress_context(
        self, call: CompressCall, call_next: Callable[[CompressCall], Awaitable[Any]]
    ) -> Any:
        """Record a compression that happened as a `compress_context` span.

        Every reasoning step asks whether to compress; only the steps that did (or
        failed trying) get a span, back-dated to when the check began.
        """
        started = time.time_ns()
        try:
            result = await call_next(call)
        except Exception as exc:
            span = self._compress_span(call, started)
            record_error(span, exc)
            span.end()
            raise
        if getattr(result, "type", None) == "context_compressed":
            span = self._compress_span(call, started)
            span.set_attributes(
                {
                    "tether.compression.before_tokens": result.before_tokens,
                    "tether.compression.after_tokens": result.after_tokens,
                    "tether.compression.messages": result.compressed_messages,
                    "tether.compression.summarised": result.summarised,
                    "tether.compression.offloaded": result.offload_path is not None,
                }
            )
            span.end()
        return result

    def _compress_span(self, call: CompressCall, started: int) -> trace.Span:
        attributes = {"tether.reply.id": call.reply_id} if call.reply_id else {}
        return self._tracer.start_span(
            "compress_context", kind=SpanKind.INTERNAL, attributes=attributes, start_time=started
        )
