"""Run in a fresh process: load the paused state, confirm, resume; print the spans as JSON."""

from __future__ import annotations

import asyncio
import json
import sys

from obs_helpers import RAN, pausing_agent, span_dicts
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether.event import ConfirmResult, UserConfirmResultEvent
from tether.state import AgentState
from tether.tracing import TracingMiddleware


async def main(path: str) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    with open(path, encoding="utf-8") as f:
        state = AgentState.model_validate_json(f.read())
    agent = pausing_agent(TracingMiddleware(tracer_provider=provider), state, resumed=True)
    asking = state.reply_msg().tool_calls
    confirm = UserConfirmResultEvent(
        reply_id=state.reply.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=c) for c in asking],
    )
    msg = await agent.reply(confirm)
    print(
        json.dumps(
            {
                "text": msg.get_text_content(),
                "ran": RAN,
                "spans": span_dicts(exporter.get_finished_spans()),
            }
        )
    )


asyncio.run(main(sys.argv[1]))
