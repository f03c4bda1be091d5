"""A real OTLP/HTTP trace receiver on 127.0.0.1 (protobuf bodies), for the tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


class Receiver(ThreadingHTTPServer):
    """Keeps every export request; `wait_for` blocks until spans with a name arrive."""

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.requests: list[tuple[str, ExportTraceServiceRequest]] = []
        self.arrived = threading.Condition()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def spans(self) -> list[Any]:
        """Every span received so far."""
        with self.arrived:
            return self._all()

    def wait_for(self, name: str, timeout: float = 20.0) -> list[Any]:
        """The spans received once one named `name` is among them (or fail after `timeout`)."""
        with self.arrived:
            ok = self.arrived.wait_for(lambda: any(s.name == name for s in self._all()), timeout)
        assert ok, f"no span {name!r} arrived; got {[s.name for s in self.spans()]}"
        return self.spans()

    def _all(self) -> list[Any]:
        return [
            span
            for _, request in self.requests
            for resource in request.resource_spans
            for scope in resource.scope_spans
            for span in scope.spans
        ]


class _Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        with self.server.arrived:
            self.server.requests.append((self.path, request))
            self.server.arrived.notify_all()
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@contextmanager
def receiving() -> Iterator[Receiver]:
    """A receiver serving in a thread for the duration of the block."""
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def attributes(span: Any) -> dict[str, Any]:
    """A protobuf span's attributes as plain values."""
    out: dict[str, Any] = {}
    for item in span.attributes:
        value = item.value
        out[item.key] = getattr(value, value.WhichOneof("value"))
    return out
