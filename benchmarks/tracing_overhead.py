"""Tracing overhead: the loop_overhead workload with `TracingMiddleware` installed.

Per reply: a model call returning two tool calls, both tools run, a second model call
answers (the workload of `benchmarks/loop_overhead.py`, imported from it). Cases:

- no middleware (the baseline);
- `TracingMiddleware`, no SDK provider set (target: ≤ 5% over the baseline);
- with an SDK `TracerProvider` exporting to a no-op exporter (target: ≤ 40%), through a
  `SimpleSpanProcessor` (each span exported as it ends) and through a
  `BatchSpanProcessor` with its default settings (what production uses: spans queue up
  and a thread exports them in batches; its work counts, it runs on the same GIL);
- the Batch setup plus an SDK `MeterProvider` (metrics recorded, never exported);
- with a free tracer (spans that cost nothing): tether's own share of the traced case;
- a middleware with the same hooks doing nothing (each returns `call_next(call)`): the
  loop's part of that share (what any middleware with those hooks costs), the rest of it
  being tracing's own work.

Below the table, the SDK alone: one reply's spans replayed straight into the SDK (the
same names, kinds, parents and attributes, no loop, no tether), and the overhead per span
in µs, which stays what it is when the loop gets faster while the percentage grows.

    python benchmarks/tracing_overhead.py [--replies N]
    python benchmarks/tracing_overhead.py --instructions [--tree LABEL=SRC_DIR ...]

`--instructions` counts instructions per reply under `valgrind --tool=cachegrind` (runs of
`--many` minus runs of `--few` replies, so start-up and warm-up cancel out) for the main
cases, on one or more source trees: a figure the machine's load does not move. Its last
row is the SDK alone: one reply's spans (recorded once) replayed into the SDK, with no
loop and no tether, per reply; below the table, tether's share split into the loop's
part and tracing's own, and the SDK's instructions per span. The case "one free span per
hook" is the floor of any tracing middleware of the same hooks: each stream runs inside
one free span with fixed attributes, and nothing else is done (no context, no attributes
from the data): what a tracing middleware costs before it traces anything. The case after
it also makes each span current while its stream steps (the OpenTelemetry API's `attach`
and `detach` around each step, never across a `yield`), which a tracing middleware needs
so that what runs inside a step (a model client's span, a tool's) parents to its span.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import re
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import (
    BatchSpanProcessor,
    SimpleSpanProcessor,
    SpanExporter,
    SpanExportResult,
)
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

sys.path.insert(0, str(Path(__file__).parent))
from loop_overhead import MODEL, TOOLKIT, calibration_us, pct

from tether.agent import Agent
from tether.message import UserMsg
from tether.middleware import MiddlewareBase
from tether.middleware._chain import own_hooks
from tether.tracing import TracingMiddleware

HERE = Path(__file__).resolve().parent


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


_VALID = trace.SpanContext(1, 2, is_remote=False, trace_flags=trace.TraceFlags(1))


class FreeTracer(trace.Tracer):
    """Spans that cost nothing (valid, non-recording): what is left is tether's own work."""

    def start_span(self, *args: Any, **kwargs: Any) -> trace.Span:
        return trace.NonRecordingSpan(_VALID)

    def start_as_current_span(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError


class FreeTracerProvider(trace.TracerProvider):
    def get_tracer(self, *args: Any, **kwargs: Any) -> trace.Tracer:
        return FreeTracer()


def _pass_on(self: MiddlewareBase, call: Any, call_next: Any) -> Any:
    return call_next(call)  # (an iterator hook's stream, an awaitable hook's awaitable)


PassThroughHooks = type(
    "PassThroughHooks",
    (MiddlewareBase,),
    {
        "__doc__": "`TracingMiddleware`'s hooks doing nothing: what the loop costs to call them.",
        "watches_all_events": False,
        "passes_through": True,
        # the hooks of the tree measured (`--tree`), whichever they are
        **dict.fromkeys(own_hooks(TracingMiddleware), _pass_on),
    },
)

_FIXED = {"gen_ai.operation.name": "chat", "gen_ai.provider.name": "x", "gen_ai.request.model": "m"}
_FREE_TRACER = FreeTracer()


def _spanning(name: str) -> Any:
    """A stream hook that runs the stream inside one free span: the layer any tracing adds."""

    async def hook(self: MiddlewareBase, call: Any, call_next: Any) -> Any:
        span = _FREE_TRACER.start_span(name, attributes=_FIXED)
        try:
            async for item in call_next(call):
                yield item
        finally:
            span.end()

    return hook


def _spanning_current(name: str) -> Any:
    """As `_spanning`, the span also current while its stream steps (never across a `yield`):
    what tracing needs so that the spans made inside a step (a model client's, a tool's)
    are its children."""

    async def hook(self: MiddlewareBase, call: Any, call_next: Any) -> Any:
        span = _FREE_TRACER.start_span(name, attributes=_FIXED)
        current = trace.set_span_in_context(span)
        stream = call_next(call)
        try:
            while True:
                token = otel_context.attach(current)
                try:
                    item = await anext(stream, _END)
                finally:
                    otel_context.detach(token)
                if item is _END:
                    break
                yield item
        finally:
            span.end()

    return hook


_END = object()

MinimalSpans = type(
    "MinimalSpans",
    (MiddlewareBase,),
    {
        "__doc__": "One free span per stream hook, fixed attributes, no context: the least any"
        " tracing middleware of these hooks does (its floor).",
        "watches_all_events": False,
        "passes_through": True,
        **dict.fromkeys(own_hooks(TracingMiddleware), _pass_on),
        "on_reply": _spanning("invoke_agent a"),
        "on_model_call": _spanning("chat m"),
        "on_acting": _spanning("execute_tool t"),
    },
)

CurrentSpans = type(
    "CurrentSpans",
    (MiddlewareBase,),
    {
        "__doc__": "`MinimalSpans` with each span current while its stream steps: the least a"
        " tracing middleware whose spans parent what runs inside them does.",
        "watches_all_events": False,
        "passes_through": True,
        **dict.fromkeys(own_hooks(TracingMiddleware), _pass_on),
        "on_reply": _spanning_current("invoke_agent a"),
        "on_model_call": _spanning_current("chat m"),
        "on_acting": _spanning_current("execute_tool t"),
    },
)

FREE = "TracingMiddleware, free tracer (tether's share)"
MINIMAL = "one free span per hook, fixed attributes (any tracing's floor)"
CURRENT = "the same, each span current while its stream steps (parenting)"
HOOKS = "the same hooks doing nothing (the loop's part)"
REPLAY = "the SDK alone: one reply's spans replayed"
SDK = "TracingMiddleware, SDK tracer, no-op exporter (Simple processor)"
BATCH = "TracingMiddleware, SDK tracer, no-op exporter (Batch processor)"
TARGETS = {
    "TracingMiddleware, no SDK provider": 5.0,
    SDK: 40.0,
    BATCH: 40.0,
}


def cases() -> tuple[
    dict[str, list[MiddlewareBase]], dict[str, NoOpExporter], dict[str, TracerProvider]
]:
    simple, batch = NoOpExporter(), NoOpExporter()
    simple_provider = TracerProvider()
    simple_provider.add_span_processor(SimpleSpanProcessor(simple))
    batch_provider = TracerProvider()
    batch_provider.add_span_processor(BatchSpanProcessor(batch))
    meter_provider = MeterProvider(metric_readers=[InMemoryMetricReader()])
    return (
        {
            "no middleware": [],
            "MiddlewareBase() (any middleware at all)": [MiddlewareBase()],
            "TracingMiddleware, no SDK provider": [TracingMiddleware()],
            SDK: [TracingMiddleware(tracer_provider=simple_provider)],
            BATCH: [TracingMiddleware(tracer_provider=batch_provider)],
            "TracingMiddleware, SDK tracer (Batch) + meter": [
                TracingMiddleware(tracer_provider=batch_provider, meter_provider=meter_provider)
            ],
            FREE: [TracingMiddleware(tracer_provider=FreeTracerProvider())],
            HOOKS: [PassThroughHooks()],
            MINIMAL: [MinimalSpans()],
            CURRENT: [CurrentSpans()],
        },
        {SDK: simple, BATCH: batch},
        {"Simple": simple_provider, "Batch": batch_provider},
    )


async def one_reply_spans() -> list[ReadableSpan]:
    """The spans of one traced reply, parents first (recorded in memory)."""
    memory = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    await per_reply_us([TracingMiddleware(tracer_provider=provider)], 1)
    return sorted(memory.get_finished_spans(), key=lambda s: s.start_time or 0)


def sdk_replay_us(
    provider: TracerProvider, spans: list[ReadableSpan], n: int = 1_000, repeat: int = 5
) -> float:
    """The SDK's cost of `spans` (names, kinds, parents, attributes), µs per reply (best of 5).

    Each span starts under its parent's context and gets its attributes before it ends,
    as the middleware does; nothing else runs.
    """
    tracer = provider.get_tracer("replay")
    plan = [
        (s.name, s.kind, s.parent.span_id if s.parent else None, s.context.span_id, s.attributes)
        for s in spans
    ]
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            contexts: dict[int, Any] = {}
            opened = []
            for name, kind, parent, own, attributes in plan:
                span = tracer.start_span(name, context=contexts.get(parent or 0), kind=kind)
                contexts[own] = trace.set_span_in_context(span)
                opened.append((span, attributes))
            for span, attributes in reversed(opened):
                span.set_attributes(attributes or {})
                span.end()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


def sdk_span_us(provider: TracerProvider, n: int = 4_000, repeat: int = 5) -> float:
    """The SDK's own cost of one span with a few attributes (best of `repeat` runs)."""
    tracer = provider.get_tracer("floor")
    attributes: dict[str, str | int] = {"a.b": "chat", "a.c": "x", "a.d": "model", "a.e": 1}
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            tracer.start_span("chat x", attributes=attributes).end()
        best = min(best, (time.perf_counter() - t0) / n * 1e6)
    return best


async def main(replies: int) -> None:
    gc.collect()
    setups, exporters, providers = cases()
    for middlewares in setups.values():
        await per_reply_us(middlewares, 200)  # warm up
    # Interleave the cases in rounds so the VM's drift lands on all of them alike.
    samples: dict[str, list[float]] = {name: [] for name in setups}
    rounds = 10
    for _ in range(rounds):
        for name, middlewares in setups.items():
            samples[name] += await per_reply_us(middlewares, replies // rounds)
    base = statistics.median(samples["no middleware"])
    rows: list[tuple[str, str, str, str, str]] = []
    for name, values in samples.items():
        median = statistics.median(values)
        overhead = (median - base) / base * 100
        target = TARGETS.get(name)
        verdict = (
            "" if target is None else f"≤ {target:.0f}% {'ok' if overhead <= target else 'MISSED'}"
        )
        shown = "—" if name == "no middleware" else f"{overhead:+.1f}%"
        rows.append((name, f"{median:,.0f} µs", f"{pct(values, 0.95):,.0f} µs", shown, verdict))
    spans_per_reply = exporters[SDK].spans / max(1, 200 + replies)
    spans = await one_reply_spans()
    sdk_alone = {
        label: (sdk_replay_us(provider, spans), sdk_span_us(provider))
        for label, provider in providers.items()
    }
    print(f"replies per case: {replies}; spans per traced reply: {spans_per_reply:.0f}")
    width = max(len(r[0]) for r in rows)
    print(f"{'case':<{width}}  {'median':>9}  {'p95':>9}  {'overhead':>8}  target")
    print("-" * (width + 48))
    for name, shown_median, p95, shown_overhead, verdict in rows:
        print(f"{name:<{width}}  {shown_median:>9}  {p95:>9}  {shown_overhead:>8}  {verdict}")
    own = statistics.median(samples[FREE]) - base
    n = len(spans)
    for label, name in (("Simple", SDK), ("Batch", BATCH)):
        traced = statistics.median(samples[name]) - base
        print(
            f"traced reply ({label}): +{traced:.0f} µs = {traced / n:.1f} µs per span ({n} "
            f"spans); tether's share (free tracer) +{own:.0f} µs, the rest +{traced - own:.0f} "
            "µs the SDK's"
        )
    for label, (replay, floor) in sdk_alone.items():
        print(
            f"the SDK alone ({label}): one reply's {n} spans replayed (names, parents, "
            f"attributes) {replay:.0f} µs = {replay / base * 100:.0f}% of a reply, "
            f"{replay / n:.1f} µs per span; a bare span (4 attributes) {floor:.1f} µs"
        )
    print(f"calibration: sum(range(100)) {calibration_us():.2f} µs (~0.85 on a quiet run)")


INSTRUCTION_CASES = (
    "no middleware",
    "TracingMiddleware, no SDK provider",
    FREE,
    HOOKS,
    MINIMAL,
    CURRENT,
    SDK,
    BATCH,
    REPLAY,
)


async def _child(case: str, replies: int) -> None:
    """`replies` replies of one case (inside valgrind), after three to warm up."""
    if case == REPLAY:  # the SDK's work for `replies` replies' spans, and nothing else
        spans = await one_reply_spans()
        exporter = NoOpExporter()
        provider = TracerProvider()
        provider.add_span_processor(SimpleSpanProcessor(exporter))
        sdk_replay_us(provider, spans, n=3 + replies, repeat=1)
        print(f"spans per reply: {len(spans)}")
        return
    middlewares = cases()[0][case]
    await per_reply_us(middlewares, 3 + replies)


_CACHEGRIND = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]


def _counted(out: str) -> int:
    found = re.search(r"I\s+refs:\s+([\d,]+)", out)
    if found is None:
        raise RuntimeError(f"no instruction count in valgrind's output:\n{out}")
    return int(found.group(1).replace(",", ""))


def instructions(src: str, case: str, runs: Sequence[int]) -> tuple[list[int], str]:
    """Instructions of one process per entry of `runs` (that many replies of `case` on tree
    `src`), the processes run at once; and the first one's output."""
    env = {**os.environ, "PYTHONPATH": src, "PYTHONHASHSEED": "0"}
    procs = [
        subprocess.Popen(
            [*_CACHEGRIND, sys.executable, __file__, "--child", case, str(replies)],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for replies in runs
    ]
    outs = [p.communicate() for p in procs]
    for p, (_, err) in zip(procs, outs, strict=True):
        if p.returncode:
            raise RuntimeError(f"a counted run failed:\n{err[-2000:]}")
    return [_counted(err) for _, err in outs], outs[0][0]


def instruction_table(trees: list[list[str]], few: int, many: int) -> None:
    """Instructions per reply of each case on each tree (runs of `many` minus `few`)."""
    print(f"instructions per reply (runs of {many} minus runs of {few} replies; M)", flush=True)
    width = max(len(c) for c in INSTRUCTION_CASES)
    print(f"{'case':<{width}}  " + "  ".join(f"{label:>18}" for label, _ in trees), flush=True)
    base: dict[str, float] = {}
    found: dict[tuple[str, str], float] = {}
    spans: dict[str, int] = {}
    for case in INSTRUCTION_CASES:
        row = []
        for label, src in trees:
            (low, high), printed = instructions(src, case, (few, many))
            per = found[label, case] = (high - low) / (many - few)
            if case == REPLAY:
                spans[label] = int(printed.split()[-1])
            base.setdefault(label, per)  # the first case is the floor
            row.append(f"{per / 1e6:7.3f} M {(per / base[label] - 1) * 100:+6.1f}%")
            if case == REPLAY:  # not on top of a reply: its share of one
                row[-1] = f"{per / 1e6:7.3f} M {per / base[label] * 100:6.1f}%"
        print(f"{case:<{width}}  " + "  ".join(f"{r:>18}" for r in row), flush=True)
    for label, _ in trees:
        floor, free, hooks, least, current = (
            found[label, c] for c in ("no middleware", FREE, HOOKS, MINIMAL, CURRENT)
        )
        print(
            f"{label}: tether's share {(free - floor) / floor * 100:+.1f}% of a reply = the "
            f"loop calling the hooks {(hooks - floor) / floor * 100:+.1f}% + tracing's own "
            f"work {(free - hooks) / floor * 100:+.1f}%; the SDK alone "
            f"{found[label, REPLAY] / spans[label] / 1e3:.0f} k instructions per span "
            f"({spans[label]} spans a reply)",
            flush=True,
        )
        print(
            f"{label}: the floor of any tracing middleware of these hooks (one free span each,"
            f" fixed attributes, no context) {(least - floor) / floor * 100:+.1f}% of a reply;"
            f" made current while their streams step {(current - floor) / floor * 100:+.1f}%",
            flush=True,
        )


def _run(argv: Any = None) -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--replies", type=int, default=2_000)
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="instruction counts under valgrind instead of times (load-proof, minutes)",
    )
    parser.add_argument("--tree", action="append", default=[], metavar="LABEL=SRC_DIR")
    parser.add_argument("--few", type=int, default=20)
    parser.add_argument("--many", type=int, default=120)
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        asyncio.run(_child(args.child[0], int(args.child[1])))
    elif args.instructions:
        trees = [t.split("=", 1) for t in args.tree] or [["this", str(HERE.parent / "src")]]
        instruction_table(trees, args.few, args.many)
    else:
        asyncio.run(main(args.replies))


if __name__ == "__main__":
    _run()
