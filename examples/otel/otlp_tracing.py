"""Send tether's traces to any OTLP endpoint (the README snippet).

    pip install 'tether[otel]' opentelemetry-sdk opentelemetry-exporter-otlp-proto-http
    OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 python examples/otel/otlp_tracing.py

A scripted model stands in for a real one, so this runs offline (all but the export).
"""

from opentelemetry import trace
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import BatchSpanProcessor

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tracing import TracingMiddleware

provider = TracerProvider()
provider.add_span_processor(BatchSpanProcessor(OTLPSpanExporter()))  # OTEL_EXPORTER_OTLP_*
trace.set_tracer_provider(provider)
model = ScriptedChatModel([AssistantMsg("assistant", "Traced!")])
agent = Agent(
    name="helper", system_prompt="Be brief.", model=model, middlewares=[TracingMiddleware()]
)

if __name__ == "__main__":
    import asyncio

    print(asyncio.run(agent.reply(UserMsg("user", "hi"))).get_text_content())
    provider.shutdown()  # flush the batch before exiting
