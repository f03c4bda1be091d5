"""The README's OTLP snippet, run as a program against a real local OTLP/HTTP receiver."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

EXAMPLE = Path(__file__).parents[2] / "examples" / "otel" / "otlp_tracing.py"


class Receiver(ThreadingHTTPServer):
    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), Handler)
        self.requests: list[tuple[str, ExportTraceServiceRequest]] = []


class Handler(BaseHTTPRequestHandler):
    server: Receiver

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        self.server.requests.append((self.path, request))
        reply = ExportTraceServiceResponse().SerializeToString()
        self.send_response(200)
        self.send_header("Content-Type", "application/x-protobuf")
        self.send_header("Content-Length", str(len(reply)))
        self.end_headers()
        self.wfile.write(reply)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    server = Receiver()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()
    thread.join(5)


def test_the_snippet_sends_the_reply_spans_over_otlp(receiver: Receiver) -> None:
    port = receiver.server_address[1]
    env = {**os.environ, "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}
    out = subprocess.run(
        [sys.executable, str(EXAMPLE)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "Traced!"
    assert [path for path, _ in receiver.requests] == ["/v1/traces"]
    spans = [
        span
        for resource in receiver.requests[0][1].resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    ]
    assert sorted(s.name for s in spans) == ["chat scripted", "invoke_agent helper"]
    root = next(s for s in spans if s.name == "invoke_agent helper")
    chat = next(s for s in spans if s.name == "chat scripted")
    assert chat.parent_span_id == root.span_id and chat.trace_id == root.trace_id
    attributes = {a.key: a.value.string_value for a in root.attributes}
    assert attributes["gen_ai.operation.name"] == "invoke_agent"
    assert attributes["gen_ai.agent.name"] == "helper"
