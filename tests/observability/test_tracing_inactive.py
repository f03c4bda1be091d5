"""With no SDK provider and the loggers off, the middleware is skipped and writes nothing."""

from __future__ import annotations

import subprocess
import sys

from tether.middleware._chain import overrides, overrides_any

_INACTIVE = """
import asyncio, logging
from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.tracing import TracingMiddleware
from tether.middleware._chain import overrides
from tether.model import ScriptedChatModel

assert not logging.getLogger("tether").isEnabledFor(logging.INFO)
middleware = TracingMiddleware()
assert not middleware.is_active
assert not overrides(middleware, "on_reply") and not overrides(middleware, "on_model_call")
model = ScriptedChatModel([AssistantMsg("a", "hi")])
agent = Agent(name="bot", system_prompt="p", model=model, middlewares=[middleware])
msg = asyncio.run(agent.reply(UserMsg("user", "hi")))
assert msg.get_text_content() == "hi" and "trace" not in msg.metadata
model.assert_complete()
print("inactive")
"""


def test_no_provider_means_no_hooks_and_no_state_written() -> None:
    # A fresh process: no test before this one can have set a global provider there.
    out = subprocess.run([sys.executable, "-c", _INACTIVE], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "inactive"


_LATE_PROVIDER = """
import asyncio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.tracing import TracingMiddleware
from tether.model import ScriptedChatModel

middleware = TracingMiddleware()
model = ScriptedChatModel([AssistantMsg("a", "one"), AssistantMsg("a", "two")])
agent = Agent(name="bot", system_prompt="p", model=model, middlewares=[middleware])
first = asyncio.run(agent.reply(UserMsg("user", "hi")))
assert not middleware.is_active and "trace" not in first.metadata
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)  # after the agent was built and has replied
assert middleware.is_active
second = asyncio.run(agent.reply(UserMsg("user", "again")))
spans = exporter.get_finished_spans()
print(sorted(s.name for s in spans), "trace" in second.metadata)
"""


def test_a_provider_set_after_the_agent_is_built_traces_the_next_reply() -> None:
    out = subprocess.run([sys.executable, "-c", _LATE_PROVIDER], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['chat scripted', 'invoke_agent bot'] True"


def test_an_active_tracer_does_not_make_reply_build_every_event(telemetry) -> None:
    middleware = telemetry.middleware()
    assert middleware.is_active and overrides(middleware, "on_reply")
    assert not overrides_any([middleware], ("on_reply", "on_reasoning", "on_acting"))


def test_importing_tether_middleware_or_tracing_loads_no_opentelemetry() -> None:
    code = (
        "import sys, tether, tether.middleware, tether.tracing, tether.agent; "
        "print(any(m.startswith('opentelemetry') for m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_without_the_otel_extra_the_error_names_it() -> None:
    code = (
        "import sys; sys.modules['opentelemetry'] = None\n"
        "try:\n"
        "    from tether.tracing import TracingMiddleware\n"
        "except ImportError as exc:\n"
        "    print(exc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert "pip install 'tether[otel]'" in out.stdout


_UNREADABLE_GLOBALS = """
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from tether.tracing import TracingMiddleware
from tether.tracing import _middleware as _tracing

_tracing.GLOBALS_READABLE = False  # an API that keeps its globals elsewhere
middleware = TracingMiddleware()
assert not middleware._globals_only
before = middleware.is_active
trace.set_tracer_provider(TracerProvider())
print(before, middleware.is_active)
"""


def test_without_readable_api_globals_the_switches_decide() -> None:
    # The fast look at the API's private globals is skipped; a late provider still counts.
    out = subprocess.run(
        [sys.executable, "-c", _UNREADABLE_GLOBALS], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False True"


def test_the_api_keeps_its_globals_where_is_active_reads_them() -> None:
    # If this fails, an OpenTelemetry upgrade moved them: `is_active` falls back (slower).
    from tether.tracing._metrics import GLOBALS_READABLE

    assert GLOBALS_READABLE
