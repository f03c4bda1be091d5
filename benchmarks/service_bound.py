"""The least a served reply can cost, next to the bare SSE floor of `service_load.py`.

Issue 33 asks `tether serve` (SQLite) for at most 2.0x the instructions per reply of the
bare Starlette SSE floor (`_sse_floor.py`: the same events and sizes, one WAL insert each,
no validation, leases, state or tools). A served reply does at least three things the floor
does only in part or not at all, each measured here under cachegrind in the same run:

- the floor's HTTP and SSE work without its log inserts (`BENCH_FLOOR_LOG=0`): receiving
  the request and streaming the same frames;
- the reply itself: an in-process `Agent.reply` of the benchmark's agent (two model calls,
  two tools), without a checkpoint (`reply()`, which builds fewer events than the
  service's `reply_stream`);
- its save points (counted in-process), each at the cost of raw `sqlite3` writing
  precomputed bytes with tether's SQL (`storage.py --history`'s raw case: no
  serialisation, no planning, no checks).

Their sum leaves out everything else a service does (leases, fencing, the event log, the
events' JSON, loading the session, authentication), so it is a lower bound: if it is above
2.0x the floor, no trimming of the service reaches the target.

Two fuller bounds follow, each the floor's HTTP and SSE work, plus the reply as the service
runs it (`reply_stream`, every event built and its JSON encoded once, as the service logs
and streams it), plus all of a reply's SQL on raw `sqlite3` with precomputed bytes
(`_service_sql.py`):
- "as tether runs it": every statement `tether serve` runs per reply, in its 13
  transactions on two files (lease, fence, the events appended before each save point, the
  saves, the release with the held-back events, the log's tail read back, the agent lookup);
- "with every merge": the least SQL that keeps the guarantees, on one file in 6 write
  transactions (lease and fence together, each save point's events in its save's
  transaction, the release in the last one, nothing read back).

For Redis (target 2.5x the same floor), the reply's commands are each counted at the cost of
the least command there is: one `PING` round trip of `redis.asyncio` (the client tether
uses, with hiredis), against a `redis-server` this script starts: 13 per reply as `tether
serve` runs it (read off a worker: 5 saves, 3 appends, lease, fence, release, the
follower's read of the tail, the agent lookup), 6 with every merge.

    python benchmarks/service_bound.py [--few 20 --many 80]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SRC = str(HERE.parent / "src")
REPLIES_PER_SESSION = 8
"""As in `service_load.py --instructions`: 10 clients, 80 replies."""


async def _pings(port: int, n: int) -> None:
    """`n` PING round trips of `redis.asyncio` (after one to connect)."""
    import redis.asyncio as aioredis

    client = aioredis.Redis(host="127.0.0.1", port=port)
    await client.ping()
    for _ in range(n):
        await client.ping()
    await client.aclose()


REDIS_COMMANDS_NOW, REDIS_COMMANDS_MERGED = 13, 6
"""A served reply's Redis commands as `tether serve` sends them, and with every merge."""


async def _streamed(n: int) -> None:
    """`n` replies as the service runs them: `reply_stream`, each event's JSON encoded once."""
    from service_load import _agent

    from tether.message import UserMsg

    agent = _agent(0.0)
    for i in range(n):
        if i % REPLIES_PER_SESSION == 0:
            agent.state.context.clear()
        async for event in agent.reply_stream(UserMsg("user", "look both up")):
            event.model_dump_json()


async def _replies(n: int, counted: list[int] | None = None) -> None:
    """`n` replies of the benchmark agent in this process, sessions of 8 replies."""
    from service_load import _agent

    from tether.message import UserMsg
    from tether.state import AgentState

    async def count(state: AgentState) -> None:
        assert counted is not None
        counted.append(1)

    agent = _agent(0.0)
    for i in range(n):
        if i % REPLIES_PER_SESSION == 0:
            agent.state.context.clear()
        await agent.reply(
            UserMsg("user", "look both up"), checkpoint=count if counted is not None else None
        )


def save_points_per_reply(n: int = 16) -> float:
    """The loop's save points per reply of the benchmark agent."""
    counted: list[int] = []
    asyncio.run(_replies(n, counted))
    return len(counted) / n


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--few", type=int, default=20)
    parser.add_argument("--many", type=int, default=80)
    parser.add_argument("--reply-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--stream-child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--ping-child", type=int, nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.reply_child is not None:
        asyncio.run(_replies(args.reply_child))
        return
    if args.stream_child is not None:
        asyncio.run(_streamed(args.stream_child))
        return
    if args.ping_child is not None:
        asyncio.run(_pings(*args.ping_child))
        return
    import _history
    import _valgrind
    from service_load import _instructions

    few, many = args.few, args.many

    def served(log: bool) -> float:
        counts = []
        for n in (few, many):
            with tempfile.TemporaryDirectory() as tmp:
                os.environ["BENCH_FLOOR_LOG"] = "1" if log else "0"
                counts.append(_instructions(SRC, f"floor:{tmp}/floor.db", n, 10))
        return (counts[1] - counts[0]) / (many - few)

    def child(script: str, *args: str) -> float:
        low, high = (_valgrind.instructions(SRC, script, *args, str(n)) for n in (few, many))
        return (high - low) / (many - few)

    def in_process() -> float:
        return child(str(Path(__file__).resolve()), "--reply-child")

    def streamed() -> float:
        return child(str(Path(__file__).resolve()), "--stream-child")

    def sql(mode: str) -> float:
        return child(str(HERE / "_service_sql.py"), mode)

    def ping() -> float:
        from storage import start_redis

        with tempfile.TemporaryDirectory() as tmp:
            server, port = start_redis(Path(tmp))
            try:
                script = str(Path(__file__).resolve())
                low, high = (
                    _valgrind.instructions(SRC, script, "--ping-child", str(port), str(n))
                    for n in (10 * few, 10 * many)
                )
            finally:
                server.terminate()
                server.wait()
        return (high - low) / (10 * (many - few))

    floor = served(log=True)
    transport = served(log=False)
    reply = in_process()
    saves = save_points_per_reply()
    raw = _history.per_save(SRC, "raw", 6, 10, 40, 0)
    bound = transport + reply + saves * raw
    stream = streamed()
    sql_now, sql_merged = sql("now"), sql("merged")
    round_trip = ping()
    redis_now, redis_merged = REDIS_COMMANDS_NOW * round_trip, REDIS_COMMANDS_MERGED * round_trip
    print(f"instructions per reply (runs of {many} minus {few} replies; M)")
    print("| part | M/reply | × floor |\n|---|---|---|")
    rows = [
        ("the bare SSE floor (`_sse_floor.py`)", floor),
        ("its HTTP and SSE work without its log inserts", transport),
        ("an in-process `reply()` of the same agent, no checkpoint", reply),
        (f"{saves:g} save points at raw `sqlite3`'s cost ({raw / 1e3:.0f} k each)", saves * raw),
        ("**the least a served reply can cost (their sum)**", bound),
        ("the reply as served: `reply_stream`, each event's JSON encoded", stream),
        ("a reply's SQL on raw `sqlite3`, as tether runs it (13 transactions)", sql_now),
        ("a reply's SQL on raw `sqlite3`, with every merge (6 transactions)", sql_merged),
        ("**HTTP + reply as served + SQL as tether runs it**", transport + stream + sql_now),
        ("**HTTP + reply as served + SQL with every merge**", transport + stream + sql_merged),
        (f"one `redis.asyncio` PING round trip ({round_trip / 1e3:.0f} k)", round_trip),
        (
            f"**Redis: HTTP + reply as served + {REDIS_COMMANDS_NOW} round trips (as run)**",
            transport + stream + redis_now,
        ),
        (
            f"**Redis: HTTP + reply as served + {REDIS_COMMANDS_MERGED} round trips (merged)**",
            transport + stream + redis_merged,
        ),
    ]
    for name, value in rows:
        print(f"| {name} | {value / 1e6:.2f} | {value / floor:.2f} |", flush=True)
    for name, value in (
        ("the lower bound", bound),
        ("with the reply as served and its SQL as tether runs it", transport + stream + sql_now),
        ("with the reply as served and its SQL merged", transport + stream + sql_merged),
    ):
        verdict = "above" if value > 2.0 * floor else "within"
        print(f"{name}: {value / floor:.2f}x the floor, {verdict} the 2.0x target")
    for name, value in (
        ("Redis, as tether runs it", transport + stream + redis_now),
        ("Redis, with every merge", transport + stream + redis_merged),
    ):
        verdict = "above" if value > 2.5 * floor else "within"
        print(f"{name}: {value / floor:.2f}x the floor, {verdict} the 2.5x target")


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
