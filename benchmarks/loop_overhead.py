"""Loop overhead: the cost of tether itself around a zero-latency model and trivial tools.

Workload per reply: a model call returning two tool calls (`add(a, b)`, `echo(text)`),
both tools run, a second model call returns the final text. The same workload written by
hand (`_floor.py`: dict messages, `asyncio.gather`, a JSON dump as the state) is measured
in the same run, and every figure is also printed as a ratio to that floor.

    python benchmarks/loop_overhead.py [--replies N] [--state]
    python benchmarks/loop_overhead.py --history [--prior 2000] [--tree LABEL=SRC_DIR ...]

`--history`: instructions per `reply()` (valgrind) at 0 and 2,000 prior messages, with
no checkpoint and with a SQLite one (see `_history_loop.py`).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
import tracemalloc
from typing import Any

import _floor
from _workload import LoopModel, toolkit

from tether.agent import Agent
from tether.app.storage import RedisStorage, SQLiteStorage
from tether.errors import StorageUnavailableError
from tether.message import Msg, TextBlock, ToolCallBlock, UserMsg
from tether.state import AgentState, Checkpoint

TOOLKIT = toolkit()
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
"""Per reply of this workload (`add` and `echo` are not concurrency-safe: two batches of
one): start, model step with the first batch's claim (one write), its result, the second
batch, its result, model step, end. Counted: 8 before the merge, not the 7 once written."""


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


async def floor_per_reply_us(prior: int, replies: int) -> list[float]:
    """`per_reply_us` for the hand-written floor."""
    messages = _floor.history(prior)
    base = len(messages)
    times = []
    for _ in range(replies):
        t0 = time.perf_counter()
        await _floor.reply(messages, "go")
        times.append((time.perf_counter() - t0) * 1e6)
        del messages[base:]
    return times


async def floor_throughput(in_flight: int) -> float:
    sessions: list[list[dict[str, Any]]] = [[] for _ in range(in_flight)]
    t0 = time.perf_counter()
    await asyncio.gather(*(_floor.reply(m, "go") for m in sessions))
    return in_flight / (time.perf_counter() - t0)


async def _tether_session(replies: int) -> AgentState:
    agent = Agent(
        name="bench", system_prompt="You are fast.", model=MODEL, toolkit=TOOLKIT, state=None
    )
    for _ in range(replies):
        await agent.reply(UserMsg("user", "go"))
    return agent.state


async def _floor_session(replies: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for _ in range(replies):
        await _floor.reply(messages, "go")
    return messages


async def state_figures(kind: str, rounds: int = 200) -> tuple[int, float]:
    """State JSON bytes after 10 replies, and the median µs of one dump + load of it."""
    times = []
    if kind == "tether":
        state = await _tether_session(10)
        size = len(state.model_dump_json().encode())
        for _ in range(rounds):
            t0 = time.perf_counter()
            AgentState.model_validate_json(state.model_dump_json())
            times.append((time.perf_counter() - t0) * 1e6)
    else:
        messages = await _floor_session(10)
        size = len(_floor.dump(messages).encode())
        for _ in range(rounds):
            t0 = time.perf_counter()
            _floor.load(_floor.dump(messages))
            times.append((time.perf_counter() - t0) * 1e6)
    return size, statistics.median(times)


def _median_us(fn: Any, rounds: int) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e6)
    return statistics.median(times)


async def load_breakdown(rounds: int = 500, repeats: int = 5) -> list[tuple[str, float]]:
    """Median µs of each part of a dump + load of the 10-reply state, and the floor's.

    "compiled pass alone" is `_fastload`'s validator built with its Python fix-up
    (`_finish`) replaced by the identity: pydantic-core's parse and validation of the whole
    state, no Python step per message (its models keep their build-only classes).
    """
    from pydantic_core import from_json

    from tether.state import _fastload

    state, messages = await _tether_session(10), await _floor_session(10)
    text, floor_text = state.model_dump_json(), _floor.dump(messages)
    finish = _fastload._finish
    _fastload._finish = lambda context: context
    try:
        bare = _fastload.fast_validator.__wrapped__(AgentState)
    finally:
        _fastload._finish = finish
    full = _fastload.fast_validator(AgentState)
    cases: dict[str, Any] = {
        "floor: dump (json.dumps)": lambda: _floor.dump(messages),
        "floor: load (json.loads)": lambda: _floor.load(floor_text),
        "floor: dump + load": lambda: _floor.load(_floor.dump(messages)),
        "json.loads of tether's JSON": lambda: json.loads(text),
        "pydantic_core.from_json of tether's JSON": lambda: from_json(text),
        "compiled pass alone (validate_json, no fix-up)": lambda: bare.validate_json(text),
        "compiled pass + fix-up (_fastload)": lambda: full.validate_json(text),
        "tether load (AgentState.model_validate_json)": lambda: AgentState.model_validate_json(
            text
        ),
        "tether dump (model_dump_json, memos warm)": state.model_dump_json,
        "tether dump + load": lambda: AgentState.model_validate_json(state.model_dump_json()),
    }
    got: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeats):  # interleaved: the VM's drift lands on every case alike
        for name, fn in cases.items():
            got[name].append(_median_us(fn, rounds))
    return [(name, statistics.median(values)) for name, values in got.items()]


async def print_state_only() -> None:
    """`--state`: the state rows and the dump + load breakdown only (a quick mode)."""
    rows = await _state_rows()
    breakdown = await load_breakdown()
    floor = dict(breakdown)["floor: dump + load"]
    rows += [(name, f"{us:,.1f} µs", _ratio(us, floor), "") for name, us in breakdown]
    _print(rows)


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


async def _kept_sessions(kind: str, n: int) -> list[Any]:
    if kind == "tether":
        return [await _tether_session(1) for _ in range(n)]
    return [await _floor_session(1) for _ in range(n)]


async def memory_figures(kind: str, n: int = 1_000) -> dict[str, int]:
    """Bytes per `n` sessions kept in memory after one reply each: RSS and tracemalloc.

    Runs in a fresh process (`--memory KIND`) so the two kinds do not share a heap.
    """
    await _kept_sessions(kind, 20)  # warm up: lazily built schemas and caches
    gc.collect()
    before = _rss()
    kept = await _kept_sessions(kind, n)
    gc.collect()
    rss = _rss() - before
    tracemalloc.start()
    base = tracemalloc.get_traced_memory()[0]
    kept2 = await _kept_sessions(kind, n)
    gc.collect()
    traced = tracemalloc.get_traced_memory()[0] - base
    tracemalloc.stop()
    del kept, kept2
    return {"rss": rss, "traced": traced}


def memory_in_subprocess(kind: str) -> dict[str, int]:
    out = subprocess.run(
        [sys.executable, __file__, "--memory", kind],
        capture_output=True,
        text=True,
        check=True,
    )
    figures: dict[str, int] = json.loads(out.stdout)
    return figures


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
    """Best of 5 fresh `from tether import Agent`, with bytecode cached as an installed
    package has it (in a scratch cache dir: PYTHONDONTWRITEBYTECODE would make every run
    compile). Not a bare `import tether`: the namespace loads its names on first use, so
    that would time almost nothing; `Agent` pulls in the whole core a reply needs."""
    code = (
        "import time; t=time.perf_counter(); from tether import Agent; print(time.perf_counter()-t)"
    )
    best = float("inf")
    with tempfile.TemporaryDirectory() as cache:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        env["PYTHONPYCACHEPREFIX"] = cache
        for _ in range(6):  # the first run writes the cache
            out = subprocess.run(
                [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env
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


def _ratio(value: float, floor: float) -> str:
    return f"{value / floor:.2f}×" if floor else ""


async def _interleaved(replies: int) -> dict[str, list[float]]:
    """The per-reply cases, in rounds: the VM's speed drifts over seconds, so interleaving
    lands that drift on all of them alike instead of skewing their ratios."""
    cases: dict[str, list[float]] = {k: [] for k in ("empty", "deep", "stream", "f0", "f4k")}
    rounds = 10
    for _ in range(rounds):
        cases["empty"] += await per_reply_us(0, replies // rounds)
        cases["deep"] += await per_reply_us(4_000, replies // rounds)
        cases["stream"] += await per_reply_us(0, replies // rounds, stream=True)
        cases["f0"] += await floor_per_reply_us(0, replies // rounds)
        cases["f4k"] += await floor_per_reply_us(4_000, replies // rounds)
    return cases


Row = tuple[str, str, str, str]


def _reply_rows(c: dict[str, list[float]]) -> list[Row]:
    med = {k: statistics.median(v) for k, v in c.items()}
    p95 = {k: pct(v, 0.95) for k, v in c.items()}
    return [
        ("floor: per reply, empty context: median", f"{med['f0']:,.1f} µs", "1.0×", ""),
        ("floor: per reply, empty context: p95", f"{p95['f0']:,.1f} µs", "1.0×", ""),
        ("floor: per reply, 4,000 prior messages: median", f"{med['f4k']:,.1f} µs", "", ""),
        (
            "per reply, empty context: median",
            f"{med['empty']:,.0f} µs",
            _ratio(med["empty"], med["f0"]),
            "≤ 5× floor",
        ),
        (
            "per reply, empty context: p95",
            f"{p95['empty']:,.0f} µs",
            _ratio(p95["empty"], p95["f0"]),
            "≤ 6× floor",
        ),
        (
            "per reply, 4,000 prior messages: median",
            f"{med['deep']:,.0f} µs",
            _ratio(med["deep"], med["f4k"]),
            "",
        ),
        ("per reply, 4,000 prior messages: p95", f"{p95['deep']:,.0f} µs", "", ""),
        ("ratio 4,000 / empty (median)", f"{med['deep'] / med['empty']:.2f}×", "", "≤ 1.2×"),
        (
            "per reply via reply_stream (every event built): median",
            f"{med['stream']:,.0f} µs",
            _ratio(med["stream"], med["f0"]),
            "",
        ),
        (
            "ratio reply_stream / reply (median)",
            f"{med['stream'] / med['empty']:.2f}×",
            "",
            "≤ 1.3×",
        ),
    ]


async def _state_rows() -> list[Row]:
    t_size, t_us = await state_figures("tether")
    f_size, f_us = await state_figures("floor")
    t_mem, f_mem = memory_in_subprocess("tether"), memory_in_subprocess("floor")
    kib = 1024
    return [
        ("floor: state JSON after 10 replies", f"{f_size:,} B", "1.0×", ""),
        ("state JSON after 10 replies", f"{t_size:,} B", _ratio(t_size, f_size), "≤ 1.15× floor"),
        ("floor: state dump + load (10 replies)", f"{f_us:,.0f} µs", "1.0×", ""),
        ("state dump + load (10 replies)", f"{t_us:,.0f} µs", _ratio(t_us, f_us), "≤ 1.5× floor"),
        ("floor: RSS per 1,000 kept sessions", f"{f_mem['rss'] / kib:,.0f} KiB", "1.0×", ""),
        (
            "RSS per 1,000 kept sessions",
            f"{t_mem['rss'] / kib:,.0f} KiB",
            _ratio(t_mem["rss"], f_mem["rss"]),
            "≤ 1.5× floor",
        ),
        (
            "floor: tracemalloc per 1,000 kept sessions",
            f"{f_mem['traced'] / kib:,.0f} KiB",
            "1.0×",
            "",
        ),
        (
            "tracemalloc per 1,000 kept sessions",
            f"{t_mem['traced'] / kib:,.0f} KiB",
            _ratio(t_mem["traced"], f_mem["traced"]),
            "≤ 1.5× floor",
        ),
    ]


async def main(replies: int) -> None:
    gc.collect()
    await per_reply_us(0, 200)  # warm up
    await floor_per_reply_us(0, 200)
    cases = await _interleaved(replies)
    rps, floor_rps = await throughput(1_000), await floor_throughput(1_000)
    saved = await checkpointed_us(max(replies // 10, 50))
    rows: list[Row] = [
        *_reply_rows(cases),
        *[(*r, "") for r in _checkpoint_rows(statistics.median(cases["empty"]), saved)],
        *await _state_rows(),
        ("agent construction", f"{construction_us():.1f} µs", "", "≤ 50 µs"),
        ("floor: replies/s, 1,000 in flight", f"{floor_rps:,.0f}", "1.0×", ""),
        ("replies/s, 1,000 in flight", f"{rps:,.0f}", _ratio(rps, floor_rps), "≥ 1/6 floor"),
        (
            "peak RSS",
            f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB",
            "",
            "",
        ),
        ("from tether import Agent", f"{import_ms():.0f} ms", "", "≤ 120 ms"),
        (
            "calibration: sum(range(100))",
            f"{calibration_us():.2f} µs",
            "",
            "(~0.85 on a quiet run)",
        ),
    ]
    _print(rows)


def _print(rows: list[Row]) -> None:
    width = max(len(r[0]) for r in rows)
    print(f"{'measure':<{width}}  {'value':>14}  {'× floor':>8}  target")
    print("-" * (width + 40))
    for name, value, ratio, target in rows:
        print(f"{name:<{width}}  {value:>14}  {ratio:>8}  {target}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--history-child"]:
        import _history_loop

        _history_loop.workload(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--replies", type=int, default=2_000)
    parser.add_argument(
        "--state",
        action="store_true",
        help="only the state rows, and a dump + load breakdown (ratios to the floor's)",
    )
    parser.add_argument("--memory", choices=["tether", "floor"], help=argparse.SUPPRESS)
    parser.add_argument("--history", action="store_true", help="reply() vs context length")
    parser.add_argument("--prior", type=int, default=2_000, help="--history: prior messages")
    parser.add_argument("--tree", action="append", default=[], help="--history: LABEL=SRC_DIR")
    parser.add_argument("--few", type=int, default=20, help="--history: replies, short run")
    parser.add_argument("--many", type=int, default=80, help="--history: replies, long run")
    args = parser.parse_args()
    if args.history:
        from pathlib import Path

        import _history_loop

        here = Path(__file__).resolve().parent
        trees = [tuple(t.split("=", 1)) for t in args.tree] or [("this", str(here.parent / "src"))]
        _history_loop.report(trees, args.prior, args.few, args.many)  # type: ignore[arg-type]
    elif args.memory:
        print(json.dumps(asyncio.run(memory_figures(args.memory))))
    elif args.state:
        asyncio.run(print_state_only())
    else:
        asyncio.run(main(args.replies))
