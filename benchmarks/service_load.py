"""Service load benchmark: concurrent SSE clients against `tether serve`.

Run: `python benchmarks/service_load.py [--clients 200] [--seconds 8] [--light-clients 10]`

Each client creates a session and runs replies over SSE back to back (`POST /replies`
with `Accept: text/event-stream`, read to `reply_end`). The model waits 50 ms per call;
a reply is 2 model calls + 2 tools (one batch of two read-only tools), so the model
alone takes 100 ms. Two setups: one worker on SQLite, and two workers (two processes,
clients split between them) on Redis. Printed per setup: replies/s, p50/p99 latency
added over the model's 100 ms, errors, and the server's CPU per reply next to the CPU
of an in-process `Agent.reply` of the same agent measured in this run.
Targets (issue 17): 0 errors; p99 added <= 25 ms at 200 clients on one worker; 2 workers
>= 1.6x the replies/s of one; service CPU per reply <= 4x the in-process reply.

The p99 target at 200 clients is arithmetic, not tuning: 200 closed-loop clients with
100 ms of model time each offer up to 200 / (0.1 s + added) replies/s, so added <= 25 ms
needs >= 1,600 replies/s from one worker, i.e. <= 0.63 ms of CPU per reply for the whole
service, less than the in-process reply alone costs on most machines. Past its capacity a
worker queues, and the added latency is the queue, which grows with the client count.
The extra row (`--light-clients`, default 10, 0 to skip) runs one worker at a load it can
carry, where the added latency is the service's own cost per reply, not the queue. The
printed capacity is 1000 / (CPU ms per reply): the replies/s one worker could serve at most;
"server cores", "client cores" and "Redis cores" say who was busy (the clients run in this
one process, one httpx client per simulated user: when it nears one core, the clients, not
the service, set the pace; the 2-worker row shares the machine's cores with the clients and
the Redis server, and a line says how many it used in all).
Each error is printed with what the client saw (status, the error event, the exception).

`--instructions [--tree LABEL=SRC_DIR ...]`: one worker's instructions per reply under
cachegrind (10 clients, 80 minus 20 replies), SQLite and Redis: a figure load cannot move;
next to the bare Starlette floor (`_sse_floor.py`: the same events and sizes, one WAL
insert per event) measured in the same run, and each as a ratio to it. The worker's own
timers are stretched by `SLOWDOWN` under valgrind (see there). Then, in the same
run and against the same floor (wall clock, no valgrind, one worker each): the p50 added
latency at those 10 clients, and the capacity (replies per second per core of the worker's
CPU) at `--saturated` clients (default 100), each as a ratio to the floor's (issue 33:
p50 <= 2x the floor's, capacity >= 0.5x). `--seconds` sets each timed row's length.
Profiling a worker: `BENCH_PROFILE=/tmp/prof` runs each worker under pyinstrument (install
it by hand) and writes `/tmp/prof.<pid>.txt`; with `BENCH_PROFILER=cprofile` too, under
cProfile timed by the worker's thread CPU time (`/tmp/prof.<pid>.pstats`: call counts).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REDIS = os.environ.get("TETHER_TEST_REDIS_URL", "redis://127.0.0.1:6379/12")
MODEL_SECONDS = 0.05
SLOWDOWN = 50
"""How much slower a worker runs under valgrind: `--instructions` stretches the run's own
timers by this much (the 0.1 s wait before events are logged without a save point, the
heartbeat's period), so they fire where they do at full speed (a reply's save points come
milliseconds apart: the linger and the heartbeat never fire) and not between most steps."""


def agents() -> dict[str, Any]:
    """`--agents service_load:agents`: the benchmark agent (50 ms per model call)."""
    return {"bench": _agent(float(os.environ.get("BENCH_LATENCY", MODEL_SECONDS)))}


def _agent(latency: float) -> Any:
    from tether.agent import Agent
    from tether.message import ToolResultBlock
    from tether.model import ChatModelBase, ChatRequest, ModelDelta, TextDelta, ToolCallDelta
    from tether.tool import Toolkit, tool

    class SlowModel(ChatModelBase):
        async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
            await asyncio.sleep(latency)
            last = request.messages[-1]
            if last.role == "assistant" and last.get_content_blocks(ToolResultBlock):
                yield TextDelta(text="Both lookups are done: the answer is 42.")
                return
            for i, word in enumerate(("alpha", "beta")):
                call_id = f"call_{uuid.uuid4().hex[:10]}"
                yield ToolCallDelta(
                    index=i, id=call_id, name="lookup", arguments=json.dumps({"word": word})
                )

    @tool(is_read_only=True, is_concurrency_safe=True)
    def lookup(word: str) -> str:
        """Look a word up."""
        return f"{word}: found"

    model = SlowModel("slow", context_length=128_000)
    return Agent("bench", "You answer.", model, toolkit=Toolkit(tools=[lookup]))


def _cpu(pid: int) -> float:
    """User + system CPU seconds of a process (Linux /proc)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _start(port: int, storage: str, prefix: str, src: str | None = None) -> subprocess.Popen[bytes]:
    if storage.startswith("floor:"):  # the bare Starlette SSE server (`_sse_floor.py`)
        cmd = [sys.executable, str(HERE / "_sse_floor.py"), str(port), storage[6:]]
    else:
        cmd = [sys.executable, "-c", _WORKER, "serve", "--agents", "service_load:agents"]
        cmd += ["--storage", storage, "--port", str(port), "--redis-prefix", prefix]
    env = {k: v for k, v in os.environ.items() if k != "TETHER_API_KEYS"}
    if src is not None:
        env["PYTHONPATH"] = src
    log = tempfile.NamedTemporaryFile(prefix="service-load-", suffix=".log", delete=False)
    _LOGS.append(Path(log.name))
    return subprocess.Popen(cmd, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=log)


_LOGS: list[Path] = []

# A worker is `tether serve`; with BENCH_PROFILE=<path> it runs under pyinstrument (installed
# by hand: `pip install pyinstrument`) and writes <path>.<pid>.txt and .pyisession on exit;
# with BENCH_PROFILER=cprofile too, under cProfile instead (<path>.<pid>.pstats: call counts, the main thread's CPU time).
_WORKER = """
import os, signal, sys
from tether.cli import main
slow = float(os.environ.get("BENCH_SLOWDOWN", "1"))
if slow != 1:  # under valgrind: the run's timers keep their full-speed place between steps
    from tether.app.server import _runs
    _runs._LINGER *= slow
    _every = _runs.Runs._every.fget
    _runs.Runs._every = property(lambda self: slow * _every(self))
where = os.environ.get("BENCH_PROFILE")
if not where:
    sys.exit(main())
# uvicorn re-raises SIGTERM once it has shut down: exit through `finally` then.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
if os.environ.get("BENCH_PROFILER") == "cprofile":
    import cProfile, time
    profiler = cProfile.Profile(time.thread_time)  # CPU time: waits and preemption not counted
    profiler.enable()
    try:
        code = main()
    finally:
        profiler.disable()
        profiler.dump_stats(f"{where}.{os.getpid()}.pstats")
    sys.exit(code)
from pyinstrument import Profiler
profiler = Profiler(interval=0.0005, async_mode="disabled")
profiler.start()
try:
    code = main()
finally:
    profiler.stop()
    profiler.last_session.save(f"{where}.{os.getpid()}.pyisession")
    with open(f"{where}.{os.getpid()}.txt", "w") as out:
        out.write(profiler.output_text(unicode=False, show_all=False, short_mode=False))
sys.exit(code)
"""


def _server_errors() -> list[str]:
    """The lines of the workers' logs that report a failure (then the logs are removed)."""
    lines = []
    for path in _LOGS:
        text = path.read_text(errors="replace")
        lines += [
            line
            for line in text.splitlines()
            if any(word in line for word in ("Error", "Traceback", "WARNING", "ERROR"))
        ]
        path.unlink(missing_ok=True)
    _LOGS.clear()
    return lines


async def _ready(url: str) -> None:
    import httpx

    async with httpx.AsyncClient() as c:
        for _ in range(300):
            try:
                if (await c.get(f"{url}/healthz")).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            await asyncio.sleep(0.05)
    raise RuntimeError(f"server at {url} did not start")


async def _client(c: Any, sid: str, stop: float, added: list[float], errors: list[str]) -> None:
    """Run replies back to back on one session until `stop` (each at most 30 s)."""
    body = {"input": {"role": "user", "content": "look both up"}}
    while time.monotonic() < stop:
        began = time.perf_counter()
        try:
            ended = await asyncio.wait_for(_reply(c, sid, body, errors), 30)
        except Exception as exc:  # counted, not raised: the run goes on
            cause = exc.__cause__ or exc.__context__
            why = f" (from {type(cause).__name__}: {cause})" if cause is not None else ""
            errors.append(f"session {sid}: {type(exc).__name__}: {exc}{why}")
            continue
        if ended:
            added.append(time.perf_counter() - began - 2 * MODEL_SECONDS)


class ClientError(Exception):
    """A transport error of one client, saying when it came (a reused connection, or mid-stream)."""


async def _reply(c: Any, sid: str, body: dict[str, Any], errors: list[str]) -> bool:
    headers = {"accept": "text/event-stream"}
    phase = "before any response"
    try:
        async with c.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=headers) as r:
            phase = f"after the response began (status {r.status_code})"
            if r.status_code != 200:
                text = (await r.aread()).decode(errors="replace")
                errors.append(f"session {sid}: status {r.status_code}: {text[:300]}")
                return False
            ended, event = False, ""
            async for line in r.aiter_lines():
                if line.startswith("event: "):
                    event = line.removeprefix("event: ")
                    ended = ended or event == "reply_end"
                elif line.startswith("data: ") and event == "error":
                    errors.append(
                        f"session {sid}: error event: {line.removeprefix('data: ')[:300]}"
                    )
            if not ended:
                errors.append(f"session {sid}: the stream ended without reply_end")
                return False
    except Exception as exc:
        if isinstance(exc, ClientError):
            raise
        raise ClientError(f"{phase}: {type(exc).__name__}: {exc!r}") from exc
    return True


def _redis_cpu() -> float:
    """CPU seconds the Redis server used so far (its own count: `INFO cpu`)."""
    import redis

    client = redis.Redis.from_url(REDIS)
    try:
        info: Any = client.info("cpu")
    finally:
        client.close()
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


async def _load(
    urls: list[str], pids: list[int], clients: int, seconds: float, *, redis: bool
) -> dict[str, Any]:
    import httpx

    for url in urls:
        await _ready(url)
    # One client (one connection) per simulated user: a shared httpx pool scans all its
    # connections and queued requests for every request, which at 200 clients cost the
    # client process more CPU per reply than the service spent on it.
    pools = [httpx.AsyncClient(base_url=urls[i % len(urls)], timeout=60) for i in range(clients)]
    try:
        mine = pools
        sids = []
        for c in mine:
            made = await c.post("/v1/sessions", json={"agent_id": "bench"})
            sids.append(str(made.json()["session_id"]))
        warm: list[float] = []
        until = time.monotonic() + 1.0
        await asyncio.gather(
            *(_client(mine[i], sids[i], until, warm, []) for i in range(min(20, clients)))
        )
        added: list[float] = []
        errors: list[str] = []
        cpu0 = sum(_cpu(p) for p in pids)
        redis0 = _redis_cpu() if redis else 0.0
        mine0 = time.process_time()
        t0 = time.monotonic()
        await asyncio.gather(
            *(_client(mine[i], sids[i], t0 + seconds, added, errors) for i in range(clients))
        )
        elapsed = time.monotonic() - t0
        cpu = sum(_cpu(p) for p in pids) - cpu0
        redis_cpu = _redis_cpu() - redis0 if redis else float("nan")
        client_cpu = time.process_time() - mine0
    finally:
        for pool in pools:
            await pool.aclose()
    ms = sorted(a * 1000 for a in added)
    return {
        "replies": len(ms),
        "rps": len(ms) / elapsed,
        "p50": statistics.median(ms) if ms else float("nan"),
        "p99": ms[int(len(ms) * 0.99) - 1] if ms else float("nan"),
        "errors": len(errors),
        "cpu_ms": 1000 * cpu / max(1, len(ms)),
        "server_busy": cpu / elapsed,  # cores the workers used
        "client_busy": client_cpu / elapsed,  # cores this (one-process) client used
        "redis_busy": redis_cpu / elapsed,  # cores the Redis server used (all its clients)
        "seen": errors[:5],  # what the failing clients saw
        "pids": pids,
    }


async def _in_process_cpu(replies: int = 300) -> float:
    """CPU ms of one `Agent.reply` of the same agent, in this process (no model wait)."""
    from tether.message import UserMsg
    from tether.state import AgentState

    agent = _agent(0.0)
    for _ in range(20):
        agent.state = AgentState()
        await agent.reply(UserMsg("user", "look both up"))
    began = time.process_time()
    for _ in range(replies):
        agent.state = AgentState()
        await agent.reply(UserMsg("user", "look both up"))
    return 1000 * (time.process_time() - began) / replies


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def _setup(
    name: str,
    storages: list[str],
    prefix: str,
    clients: int,
    seconds: float,
    src: str | None = None,
) -> dict[str, Any]:
    ports = [_free_port() for _ in storages]
    procs = [_start(p, s, prefix, src) for p, s in zip(ports, storages, strict=True)]
    try:
        urls = [f"http://127.0.0.1:{p}" for p in ports]
        redis = any(s.startswith("redis") for s in storages)
        return await _load(urls, [p.pid for p in procs], clients, seconds, redis=redis)
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(timeout=30)


def _drop(prefix: str) -> None:
    import redis

    client = redis.Redis.from_url(REDIS)
    for name in client.scan_iter(match=f"{prefix}*", count=1000):
        client.delete(name)
    client.close()


async def main(clients: int, seconds: float, light: int) -> int:
    """Run the setups and print the table; exit 1 if a target is missed."""
    base = await _in_process_cpu()
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    rows: list[tuple[str, dict[str, Any]]] = []
    with tempfile.TemporaryDirectory() as tmp:
        one = await _setup(
            "1 worker, SQLite", [f"sqlite:///{tmp}/bench.db"], prefix, clients, seconds
        )
    rows.append((f"1 worker, SQLite, {clients} clients", one))
    if light:
        with tempfile.TemporaryDirectory() as tmp:
            few = await _setup(
                "1 worker, SQLite", [f"sqlite:///{tmp}/bench.db"], prefix, light, seconds
            )
        rows.append((f"1 worker, SQLite, {light} clients", few))
    try:
        two = await _setup("2 workers, Redis", [REDIS, REDIS], prefix, clients, seconds)
    finally:
        _drop(prefix)
    rows.append((f"2 workers, Redis, {clients} clients", two))
    print(
        f"clients: {clients}, {seconds:.0f} s per setup, model 2 x {MODEL_SECONDS * 1000:.0f} ms per reply"
    )
    print(f"in-process Agent.reply CPU: {base:.2f} ms/reply")
    print(
        "| setup | replies | replies/s | p50 added ms | p99 added ms | errors | CPU ms/reply |"
        " CPU vs in-process | capacity replies/s/worker | server cores | client cores |"
        " Redis cores |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for name, r in rows:
        print(
            f"| {name} | {r['replies']:.0f} | {r['rps']:.1f} | {r['p50']:.1f} | {r['p99']:.1f} | "
            f"{r['errors']:.0f} | {r['cpu_ms']:.2f} | {r['cpu_ms'] / base:.1f}x | "
            f"{1000 / r['cpu_ms']:.0f} | {r['server_busy']:.2f} | "
            f"{r['client_busy']:.2f} | {r['redis_busy']:.2f} |"
        )
    for name, r in rows:
        for seen in r["seen"]:
            print(f"error ({name}): {seen}")
    for line in _server_errors()[:10]:
        print(f"server log: {line}")
    print(
        f"200 closed-loop clients x 100 ms model time: p99 added <= 25 ms needs >= "
        f"{clients / (2 * MODEL_SECONDS + 0.025):,.0f} replies/s, i.e. <= "
        f"{1000 * (2 * MODEL_SECONDS + 0.025) / clients:.2f} ms CPU per reply on one worker"
    )
    ratio = two["rps"] / one["rps"] if one["rps"] else 0.0
    print(f"2 workers / 1 worker replies/s: {ratio:.2f}x")
    busy = two["server_busy"] + two["client_busy"] + two["redis_busy"]
    print(
        f"2 workers used {busy:.2f} of this machine's {os.cpu_count()} cores with the clients"
        f" and Redis ({two['rps']:.0f} replies/s x {1000 * busy / max(two['rps'], 1e-9):.1f}"
        " ms of CPU per reply in all): the two workers can outrun one only on cores the"
        " clients and Redis leave free"
    )
    checks = {
        "0 errors": all(r["errors"] == 0 for _, r in rows),
        "p99 added <= 25 ms (1 worker)": one["p99"] <= 25,
        "2 workers >= 1.6x": ratio >= 1.6,
        "CPU/reply <= 4x in-process": one["cpu_ms"] <= 4 * base,
    }
    for name, ok in checks.items():
        print(f"{'PASS' if ok else 'MISS'}  {name}")
    return 0 if all(checks.values()) else 1


async def _replies(url: str, total: int, clients: int) -> None:
    """`total` replies from `clients` sessions, back to back, once the worker answers."""
    import httpx

    async with httpx.AsyncClient(base_url=url) as probe:
        for _ in range(3000):  # a worker under valgrind starts in a minute or two
            with contextlib.suppress(httpx.HTTPError):
                if (await probe.get("/healthz")).status_code == 200:
                    break
            await asyncio.sleep(0.1)
    pools = [httpx.AsyncClient(base_url=url, timeout=600) for _ in range(clients)]
    left, errors = [total], list[str]()
    body = {"input": {"role": "user", "content": "look both up"}}

    async def one(c: Any) -> None:
        sid = (await c.post("/v1/sessions", json={"agent_id": "bench"})).json()["session_id"]
        while left[0] > 0:
            left[0] -= 1
            if not await _reply(c, sid, body, errors):
                raise RuntimeError(f"a reply failed: {errors}")

    try:
        await asyncio.gather(*(one(c) for c in pools))
    finally:
        for c in pools:
            await c.aclose()


def _instructions(src: str, storage: str, replies: int, clients: int) -> int:
    """Instructions one worker (under cachegrind) executed to start, serve `replies`, stop."""
    port, prefix = _free_port(), f"bench-{uuid.uuid4().hex[:8]}"
    cmd = ["valgrind", "--tool=cachegrind", "--cache-sim=no", "--cachegrind-out-file=/dev/null"]
    if storage.startswith("floor:"):  # the bare Starlette SSE server (`_sse_floor.py`)
        cmd += [sys.executable, str(HERE / "_sse_floor.py"), str(port), storage[6:]]
    else:
        cmd += [sys.executable, "-c", _WORKER, "serve", "--agents", "service_load:agents"]
        cmd += ["--storage", storage, "--port", str(port), "--redis-prefix", prefix]
    env = {k: v for k, v in os.environ.items() if k != "TETHER_API_KEYS"} | {"PYTHONPATH": src}
    env["BENCH_SLOWDOWN"] = str(SLOWDOWN)
    proc = subprocess.Popen(
        cmd, cwd=HERE, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:
        asyncio.run(_replies(f"http://127.0.0.1:{port}", replies, clients))
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=600)
        if storage.startswith("redis"):
            _drop(prefix)
    found = re.search(r"I\s+refs:\s+([\d,]+)", err.decode(errors="replace"))
    if found is None:
        raise RuntimeError(f"no instruction count from valgrind: {err.decode()[-500:]}")
    return int(found.group(1).replace(",", ""))


def instructions_main(
    trees: list[str], few: int, many: int, clients: int, saturated: int = 100, seconds: float = 4.0
) -> int:
    """Worker instructions per reply, per tree and storage: a load-proof CPU figure.

    The difference between `many` and `few` replies, divided by the extra replies: the
    start-up and the warm-up cancel out (as in `loop_instructions.py`).
    """
    print(f"worker instructions per reply ({clients} clients, {many} - {few} replies)")

    def per_reply(src: str, kind: str) -> float:
        counts = []
        for n in (few, many):
            with tempfile.TemporaryDirectory() as tmp:
                storage = {
                    "sqlite": f"sqlite:///{tmp}/bench.db",
                    "redis": REDIS,
                    "floor": f"floor:{tmp}/floor.db",
                }[kind]
                counts.append(_instructions(src, storage, n, clients))
        return (counts[1] - counts[0]) / (many - few) / 1e6

    label0, _, src0 = trees[0].rpartition("=")
    floor = per_reply(src0, "floor")
    print(f"bare Starlette SSE floor (same events and sizes, one WAL insert each): {floor:.2f} M")
    print("| tree | SQLite M/reply | × floor | Redis M/reply | × floor |\n|---|---|---|---|---|")
    for tree in trees:
        label, _, src = tree.rpartition("=")
        lite, red = per_reply(src, "sqlite"), per_reply(src, "redis")
        print(
            f"| {label or src} | {lite:.2f} | {lite / floor:.2f} | {red:.2f} | {red / floor:.2f} |",
            flush=True,
        )
    return asyncio.run(_timed_rows(trees, clients, saturated, seconds))


async def _timed_rows(trees: list[str], clients: int, saturated: int, seconds: float) -> int:
    """p50 added latency at `clients` and capacity at `saturated` clients, next to the floor.

    Wall-clock figures (no valgrind), one worker each: the p50 added latency (over the
    model's 100 ms) at a load the worker carries, and the capacity, replies per second per
    core of the worker's CPU (replies / worker CPU seconds) at `saturated` clients.
    """
    print(
        f"timed rows: p50 added ms at {clients} clients, capacity (replies/s per core of"
        f" the worker) at {saturated} clients, {seconds:.0f} s each"
    )
    print(
        "| server | p50 added ms | × floor | capacity replies/s/core | × floor | errors |"
        "\n|---|---|---|---|---|---|"
    )
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    label0, _, src0 = trees[0].rpartition("=")
    base: tuple[float, float] | None = None
    kinds = [("floor", "floor", src0)]
    for tree in trees:
        label, _, src = tree.rpartition("=")
        kinds += [
            (f"{label or src} SQLite", "sqlite", src),
            (f"{label or src} Redis", "redis", src),
        ]
    for name, kind, src in kinds:
        rows = []
        for n in (clients, saturated):
            with tempfile.TemporaryDirectory() as tmp:
                storage = {
                    "sqlite": f"sqlite:///{tmp}/bench.db",
                    "redis": REDIS,
                    "floor": f"floor:{tmp}/floor.db",
                }[kind]
                try:
                    rows.append(await _setup(name, [storage], prefix, n, seconds, src))
                finally:
                    if kind == "redis":
                        _drop(prefix)
        p50, capacity = rows[0]["p50"], 1000 / rows[1]["cpu_ms"]
        base = base or (p50, capacity)
        print(
            f"| {name} | {p50:.1f} | {p50 / base[0]:.2f} | {capacity:.0f} |"
            f" {capacity / base[1]:.2f} | {rows[0]['errors'] + rows[1]['errors']} |",
            flush=True,
        )
    for line in _server_errors()[:10]:
        print(f"server log: {line}")
    return 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=8.0)
    parser.add_argument("--light-clients", type=int, default=10, help="extra 1-worker row; 0: skip")
    parser.add_argument(
        "--instructions",
        action="store_true",
        help="count one worker's instructions per reply under cachegrind instead (slow)",
    )
    parser.add_argument(
        "--tree", action="append", default=[], help="LABEL=SRC_DIR to measure (--instructions)"
    )
    parser.add_argument(
        "--saturated", type=int, default=100, help="clients of the capacity row (--instructions)"
    )
    parser.add_argument("--few", type=int, default=20)
    parser.add_argument("--many", type=int, default=80)
    args = parser.parse_args()
    if args.instructions:
        trees = args.tree or [f"this={HERE.parent / 'src'}"]
        sys.exit(
            instructions_main(
                trees, args.few, args.many, args.light_clients or 10, args.saturated, args.seconds
            )
        )
    sys.exit(asyncio.run(main(args.clients, args.seconds, args.light_clients)))
