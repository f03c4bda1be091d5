"""A traced tether service for the observability tests: `python serve_observed.py DB OTLP`.

Spans go to the OTLP/HTTP receiver at OTLP; `/metrics` is the service's own. It binds a
port the OS picks and prints `PORT <n>` on stdout before serving.
"""

from __future__ import annotations

import socket
import sys

import uvicorn
from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from tether._log import configure_logging
from tether.agent import Agent
from tether.app.server import create_app
from tether.app.storage import SQLiteStorage
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tracing import TracingMiddleware

KEY = "key-obs-0123456789"

db, otlp = sys.argv[1], sys.argv[2]
configure_logging()  # as `tether serve` does: TETHER_LOG turns the tether logs on
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(endpoint=f"{otlp}/v1/traces")))
trace.set_tracer_provider(provider)
model = ScriptedChatModel([AssistantMsg("a", f"answer {i}") for i in range(20)])
agent = Agent(name="bot", system_prompt="p", model=model, middlewares=[TracingMiddleware()])
app = create_app({"bot": agent}, SQLiteStorage(db), api_keys={KEY: "obs-user"}, static_dir=None)
sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(64)
print(f"PORT {sock.getsockname()[1]}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", ws="none")).run(sockets=[sock])
