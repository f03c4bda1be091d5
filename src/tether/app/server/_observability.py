"""The service's observability: `GET /metrics`, `traceparent` into the replies, request logs.

`install_observability(app)` (called by `create_app`) adds:

- `GET /metrics`: the process's metrics in the Prometheus text format. Unless the
  application set an OpenTelemetry meter provider before `create_app`, one is set up
  that the Prometheus exporter reads, so the counters of `TracingMiddleware` (replies,
  tool calls, permission decisions, pauses, retries, token usage) appear there, next to
  the `http.server.*` metrics FastAPI records itself. Needs `tether[metrics]`; without
  it the route answers 501 saying so.
- trace context: a W3C `traceparent` (with `tracestate` and `baggage`) on a request is
  made current while the request is handled; the reply it starts runs in a task that
  copies that context, so the caller's span is the parent of the reply's `invoke_agent`
  span. Needs `tether[otel]`.
- request logs: one `tether.server.request` record per request with the method, route,
  status, duration, session id and user id (never the key), when the `tether` loggers
  are on (`TETHER_LOG=info`).
"""

from __future__ import annotations

import logging
import re
import time
from typing import Any

from fastapi import FastAPI, Request
from fastapi.responses import Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from tether._log import get_logger, record
from tether.app.server._problems import problem
from tether.errors import TetherError

__all__ = ["install_observability"]

_log = get_logger("server.request")
_SESSION = re.compile(r"^/v1/sessions/([^/]+)")
_HOW_TO = (
    "`/metrics` needs OpenTelemetry's SDK and Prometheus exporter: `pip install 'tether[metrics]'`"
)


def install_observability(app: FastAPI) -> None:
    """Add `/metrics`, trace context from `traceparent`, and request logs to `app`."""
    reader_ready = _prometheus_ready()
    app.add_middleware(_ObservedRequests)

    @app.get("/metrics", include_in_schema=False)
    async def metrics() -> Response:
        """The process's metrics, Prometheus text format."""
        if not reader_ready:
            return problem(501, "MissingDependencyError", _HOW_TO)
        from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

        return Response(generate_latest(REGISTRY), media_type=CONTENT_TYPE_LATEST)


def _prometheus_ready() -> bool:
    """Set up a global meter provider read by Prometheus, unless the app set its own."""
    try:
        from opentelemetry import metrics
        from opentelemetry.exporter.prometheus import PrometheusMetricReader
        from opentelemetry.sdk.metrics import MeterProvider
    except ImportError:
        return False
    current = metrics.get_meter_provider()
    if type(current).__name__ == "_ProxyMeterProvider":  # none set yet: the API's stand-in
        metrics.set_meter_provider(MeterProvider(metric_readers=[PrometheusMetricReader()]))
    return True


class _ObservedRequests:
    """Pure ASGI middleware: the caller's trace context in, one log record out."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        try:
            from opentelemetry import context, propagate
        except ImportError:
            self._context: Any = None
            self._propagate: Any = None
        else:
            self._context, self._propagate = context, propagate

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Handle one request with its caller's trace context current."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        status = 500
        started = time.perf_counter()

        async def sending(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        token = None
        if self._propagate is not None:
            carrier = {k.decode("latin-1"): v.decode("latin-1") for k, v in scope["headers"]}
            token = self._context.attach(self._propagate.extract(carrier))
        try:
            await self.app(scope, receive, sending)
        finally:
            if token is not None:
                self._context.detach(token)
            self._observe(scope, status, time.perf_counter() - started)

    def _observe(self, scope: Scope, status: int, seconds: float) -> None:
        if not _log.isEnabledFor(logging.INFO):
            return
        template = getattr(scope.get("route"), "path", None) or "unmatched"
        path = scope.get("path", "")
        match = _SESSION.match(path)
        record(
            _log,
            logging.INFO,
            f"{scope['method']} {path} {status}",
            method=scope["method"],
            route=template,
            status=status,
            duration_ms=round(seconds * 1000, 1),
            session_id=match.group(1) if match else None,
            user_id=_user_of(scope),
        )


def _user_of(scope: Scope) -> str | None:
    app = scope.get("app")
    service = getattr(getattr(app, "state", None), "tether", None)
    if service is None:
        return None
    try:
        user: str = service.user(Request(scope))
    except TetherError:
        return None
    return user
