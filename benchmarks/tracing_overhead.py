"""Tracing overhead: the loop_overhead workload with `TracingMiddleware` installed.

Per reply: a model call returning two tool calls, both tools run, a second model call
answers (the workload of `benchmarks/loop_overhead.py`, imported from it). Cases:

- no middleware (the baseline);
- `TracingMiddleware`, no SDK provider set (target: ≤ 5% over the baseline);
- with an SDK `TracerProvider` exporting to a no-op exporter (target: ≤ 40%);
- the same plus an SDK `MeterProvider` (metrics recorded, never exported).

    python benchmarks/tracing_overhead.py [--replies N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import statistics
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

sys.path.insert(0, str(Path(__file__).parent))
from loop_overhead import MODEL, TOOLKIT, calibration_us, pct

from tether.agent import Agent
from tether.message import UserMsg
from tether.middleware import MiddlewareBase, TracingMiddleware


class NoOpExporter(SpanExporter):
    """Takes every span and drops it: what remains is the SDK's own cost."""

    def __init__(self) -> None:
        self.spans = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        self.spans += len(spans)
        return SpanExportResult.SUCCESS


async def per_reply_us(middlewares: list[MiddlewareBase], replies: int) -> list[float]:
    agent = Agent(
        name="bench",
        system_prompt="You are fast.",
        model=MODEL,
        toolkit=TOOLKIT,
        middlewares=middlewares,
    )
    times = []
    for _ in range(replies):
        t0 = time.perf_counter()
        await agent.reply(UserMsg("user", "go"))
        times.append((time.perf_counter() - t0) * 1e6)
        agent.state.context.clear()  # keep the history empty
    return times


def cases() -> tuple[dict[str, list[MiddlewareBase]], NoOpExporter, TracerProvider]:
    exporter = NoOpExporter()
    tracer_provider = TracerProvider()
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return (
        {
            "no middleware": [],
            "MiddlewareBase() (any middleware at all)": [MiddlewareBase()],
            "TracingMiddleware, no SDK provider": [TracingMiddleware()],
            "TracingMiddleware, SDK tracer, no-op exporter": [
                TracingMiddleware(tracer_provider=tracer_provider)
            ],
            "TracingMiddleware, SDK tracer + meter": [
                TracingMiddleware(tracer_provider=tracer_provider, meter_provider=meter_provider)
            ],
        },
        exporter,
        tracer_provider,
    )


def sdk_span_us(provider: TracerProvider, n: int = 4_000, repeat: int = 5) -> float:
    """The SDK's own cost of one span with a few attributes (best of `repeat` runs)."""
    tracer = provider.get_tracer("floor")
    attributes = {"a.b": "chat", "a.c": "x", "a.d": "model", "a.e": 1}
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            tracer.start_span("chat x", attributes=attributes).end()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


async def main(replies: int) -> None:
    gc.collect()
    setups, exporter, tracer_provider = cases()
    for middlewares in setups.values():
        await per_reply_us(middlewares, 200)  # warm up
    # Interleave the cases in rounds so the VM's drift lands on all of them alike.
    samples: dict[str, list[float]] = {name: [] for name in setups}
    rounds = 10
    for _ in range(rounds):
        for name, middlewares in setups.items():
            samples[name] += await per_reply_us(middlewares, replies // rounds)
    base = statistics.median(samples["no middleware"])
    targets = {
        "TracingMiddleware, no SDK provider": 5.0,
        "TracingMiddleware, SDK tracer, no-op exporter": 40.0,
    }
    rows: list[tuple[str, str, str, str, str]] = []
    for name, values in samples.items():
        median = statistics.median(values)
        overhead = (median - base) / base * 100
        target = targets.get(name)
        verdict = (
            "" if target is None else f"≤ {target:.0f}% {'ok' if overhead <= target else 'MISSED'}"
        )
        shown = "—" if name == "no middleware" else f"{overhead:+.1f}%"
        rows.append((name, f"{median:,.0f} µs", f"{pct(values, 0.95):,.0f} µs", shown, verdict))
    spans_per_reply = exporter.spans / max(1, (200 + replies) * 2)  # two traced cases
    floor = sdk_span_us(tracer_provider)
    print(f"replies per case: {replies}; spans per traced reply: {spans_per_reply:.0f}")
    print(
        f"the SDK alone: {floor:.1f} µs per span (start + 4 attributes + end, no-op export), "
        f"so {spans_per_reply:.0f} spans ≈ {floor * spans_per_reply / base * 100:.0f}% of a reply"
    )
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'median':>9}  {'p95':>9}  {'overhead':>8}  target")
    print("-" * (width + 48))
    for name, median, p95, overhead, verdict in rows:
        print(f"{name:<{width}}  {median:>9}  {p95:>9}  {overhead:>8}  {verdict}")
    print(f"calibration: sum(range(100)) {calibration_us():.2f} µs (~0.85 on a quiet run)")


def _run(argv: Any = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replies", type=int, default=2_000)
    asyncio.run(main(parser.parse_args(argv).replies))


if __name__ == "__main__":
    _run()
