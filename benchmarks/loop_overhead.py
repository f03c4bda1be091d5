"""Loop overhead: the cost of tether itself around a zero-latency model and trivial tools.

Workload per reply: a model call returning two tool calls (`add(a, b)`, `echo(text)`),
both tools run, a second model call returns the final text.

    python benchmarks/loop_overhead.py [--replies N]
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

from tether.agent import Agent
from tether.app.storage import RedisStorage, SQLiteStorage
from tether.errors import StorageUnavailableError
from tether.message import Msg, TextBlock, ToolCallBlock, UserMsg
from tether.model import ChatModelBase, ChatRequest, TextDelta, ToolCallDelta
from tether.state import AgentState, Checkpoint
from tether.tool import Toolkit, tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


_CALLS = [
    ToolCallDelta(index=0, id="c1", name="add", arguments='{"a": 1, "b": 2}'),
    ToolCallDelta(index=1, id="c2", name="echo", arguments='{"text": "hi"}'),
]
_FINAL = [TextDelta(text="The sum is 3 and the echo is hi.")]


class LoopModel(ChatModelBase):
    """Zero-latency model: tool calls on odd calls, final text on even ones."""

    def __init__(self) -> None:
        super().__init__("bench", context_length=10_000_000)

    async def stream(self, request: ChatRequest) -> Any:
        last = request.messages[-1]
        answered = (
            any(b.type == "tool_result" for b in last.content)
            if last.role == "assistant"
            else False
        )
        for delta in _FINAL if answered else _CALLS:
            yield delta


TOOLKIT = Toolkit(tools=[add, echo])
MODEL = LoopModel()


def history(n: int) -> AgentState:
    state = AgentState()
    for i in range(n // 2):
        state.add_message(UserMsg("user", f"question {i}: what is {i} + {i}?"))
        state.add_message(
            Msg(
                name="bench",
                role="assistant",
                content=[
                    ToolCallBlock(
                        id=f"h{i}", name="add", input='{"a": 1, "b": 2}', state="finished"
                    ),
                    TextBlock(text=f"The answer is {2 * i}."),
                ],
            )
        )
    return state


async def per_reply_us(
    prior: int,
    replies: int,
    *,
    stream: bool = False,
    checkpoint: Checkpoint | None = None,
    state: AgentState | None = None,
) -> list[float]:
    agent = Agent(
        name="bench",
        system_prompt="You are fast.",
        model=MODEL,
        toolkit=TOOLKIT,
        state=state if state is not None else history(prior),
    )
    base = len(agent.state.context)
    times = []
    for _ in range(replies):
        t0 = time.perf_counter()
        if stream:
            async for _event in agent.reply_stream(UserMsg("user", "go"), checkpoint=checkpoint):
                pass
        else:
            await agent.reply(UserMsg("user", "go"), checkpoint=checkpoint)
        times.append((time.perf_counter() - t0) * 1e6)
        # keep the history size fixed at `prior`
        del agent.state.context[base:]
    return times


SAVE_POINTS = 7
"""Per reply of this workload: start, model step, batch, two results, model step, end."""


async def _noop(state: AgentState) -> None:
    return None


async def checkpointed_us(replies: int) -> dict[str, list[float]]:
    """Per reply with a no-op, a SQLite and a Redis checkpoint (Redis skipped if absent)."""
    out: dict[str, list[float]] = {"noop": await per_reply_us(0, replies, checkpoint=_noop)}
    key = ("bench", "bench", "loop")
    with tempfile.TemporaryDirectory() as scratch:
        async with SQLiteStorage(f"{scratch}/bench.db") as sqlite:
            record = await sqlite.upsert_session(*key)
            saver = sqlite.checkpoint(*key)
            out["SQLite"] = await per_reply_us(0, replies, checkpoint=saver, state=record.state)
    prefix = f"tether-bench-{secrets.token_hex(4)}"
    try:
        async with RedisStorage(key_prefix=prefix, socket_timeout=1.0) as redis:
            record = await redis.upsert_session(*key)
            saver = redis.checkpoint(*key)
            out["Redis"] = await per_reply_us(0, replies, checkpoint=saver, state=record.state)
            await redis.delete_session(*key)
    except StorageUnavailableError:
        pass  # no Redis on localhost:6379: no Redis row
    return out


def construction_us(n: int = 20_000) -> float:
    t0 = time.perf_counter()
    for _ in range(n):
        Agent(name="a", system_prompt="p", model=MODEL, toolkit=TOOLKIT)
    return (time.perf_counter() - t0) / n * 1e6


async def throughput(in_flight: int) -> float:
    agents = [
        Agent(name="a", system_prompt="p", model=MODEL, toolkit=TOOLKIT) for _ in range(in_flight)
    ]
    t0 = time.perf_counter()
    await asyncio.gather(*(a.reply(UserMsg("user", "go")) for a in agents))
    return in_flight / (time.perf_counter() - t0)


def import_ms() -> float:
    best = float("inf")
    for _ in range(5):
        out = subprocess.run(
            [
                sys.executable,
                "-c",
                "import time; t=time.perf_counter(); import tether; print(time.perf_counter()-t)",
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        best = min(best, float(out.stdout) * 1000)
    return best


def calibration_us() -> float:
    """A fixed pure-Python loop: this VM's speed drifts, so read the other rows against it."""
    import timeit

    return min(timeit.repeat(lambda: sum(range(100)), number=100_000, repeat=5)) / 100_000 * 1e6


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(p * len(ordered)))]


def _checkpoint_rows(base: float, saved: dict[str, list[float]]) -> list[tuple[str, str, str]]:
    rows = []
    for name, times in saved.items():
        median = statistics.median(times)
        rows += [
            (f"per reply, {name} checkpoint: median", f"{median:,.0f} µs", ""),
            (
                f"  {name} checkpoint overhead: per reply / per save point",
                f"{median - base:,.0f} / {(median - base) / SAVE_POINTS:,.0f} µs",
                f"({SAVE_POINTS} save points)",
            ),
        ]
    return rows


async def main(replies: int) -> None:
    gc.collect()
    await per_reply_us(0, 200)  # warm up
    # The VM's speed drifts over seconds: interleave the cases in rounds so that drift
    # lands on all of them alike instead of skewing their ratio.
    empty: list[float] = []
    deep: list[float] = []
    streamed: list[float] = []
    rounds = 10
    for _ in range(rounds):
        empty += await per_reply_us(0, replies // rounds)
        deep += await per_reply_us(4_000, replies // rounds)
        streamed += await per_reply_us(0, replies // rounds, stream=True)
    rps = await throughput(1_000)
    saved = await checkpointed_us(max(replies // 10, 50))
    rows = [
        ("per reply, empty context: median", f"{statistics.median(empty):,.0f} µs", "≤ 300 µs"),
        ("per reply, empty context: p95", f"{pct(empty, 0.95):,.0f} µs", ""),
        (
            "per reply, 4,000 prior messages: median",
            f"{statistics.median(deep):,.0f} µs",
            "≤ 1.5× empty",
        ),
        ("per reply, 4,000 prior messages: p95", f"{pct(deep, 0.95):,.0f} µs", ""),
        (
            "ratio 4,000 / empty (median)",
            f"{statistics.median(deep) / statistics.median(empty):.2f}×",
            "≤ 1.5×",
        ),
        (
            "per reply via reply_stream (every event built): median",
            f"{statistics.median(streamed):,.0f} µs",
            "",
        ),
        *_checkpoint_rows(statistics.median(empty), saved),
        ("agent construction", f"{construction_us():.1f} µs", "≤ 50 µs"),
        ("replies/s, 1,000 in flight", f"{rps:,.0f}", "≥ 2,000"),
        ("peak RSS", f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB", ""),
        ("import tether", f"{import_ms():.0f} ms", "≤ 300 ms"),
        ("calibration: sum(range(100))", f"{calibration_us():.2f} µs", "(~0.85 on a quiet run)"),
    ]
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>14}  target")
    print("-" * (width + 30))
    for name, value, target in rows:
        print(f"{name:<{width}}  {value:>14}  {target}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--replies", type=int, default=2_000)
    asyncio.run(main(parser.parse_args().replies))
