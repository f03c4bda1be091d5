"""Tracing fixtures: an SDK tracer and meter provider per test, exporting to memory."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tether.tracing import TracingMiddleware


@dataclass
class Telemetry:
    tracer_provider: TracerProvider
    exporter: InMemorySpanExporter
    meter_provider: MeterProvider
    reader: InMemoryMetricReader

    def middleware(self, **options: object) -> TracingMiddleware:
        return TracingMiddleware(
            tracer_provider=self.tracer_provider, meter_provider=self.meter_provider, **options
        )

    def spans(self) -> list[ReadableSpan]:
        return list(self.exporter.get_finished_spans())

    def named(self, name: str) -> list[ReadableSpan]:
        return [s for s in self.spans() if s.name == name]

    def one(self, name: str) -> ReadableSpan:
        found = self.named(name)
        assert len(found) == 1, [s.name for s in self.spans()]
        return found[0]

    def points(self, metric: str) -> list[tuple[dict, object]]:
        """(attributes, data point) of every point of `metric`."""
        data = self.reader.get_metrics_data()
        out = []
        for resource in data.resource_metrics if data else []:
            for scope in resource.scope_metrics:
                for m in scope.metrics:
                    if m.name == metric:
                        out += [(dict(p.attributes), p) for p in m.data.data_points]
        return out


@pytest.fixture
def telemetry() -> Iterator[Telemetry]:
    exporter = InMemorySpanExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    reader = InMemoryMetricReader()
    meter_provider = MeterProvider(metric_readers=[reader])
    yield Telemetry(tracer_provider, exporter, meter_provider, reader)
    tracer_provider.shutdown()
    meter_provider.shutdown()
