"""Session storage benchmark: SQLite, Redis and PostgreSQL, 10, 200 and 1,000 messages, 100 writers.

Run: `PYTHONPATH=src .venv/bin/python benchmarks/storage.py [--messages 200] [--no-writers]`
(needs `redis-server` on PATH; the benchmark starts its own on a free port, with AOF, in a
temporary directory; likewise a PostgreSQL of its own with `initdb` + `pg_ctl`, default
settings (fsync and synchronous commit on), if they are installed). `--messages` picks the session lengths (default 10, 200 and 1,000);
`--no-writers` leaves out the 100-writer rows (for quick A/B runs of one length).

`--history [--tree LABEL=SRC_DIR ...] [--few 20 --many 60] [--cpu]`: one save point's
instructions at 6 and 2,000 prior messages, SQLite and Redis, against raw `sqlite3` doing
the same SQL with the same bytes (see `_history.py`; needs valgrind, or `--cpu`).

Bytes per reply are measured where the bytes go:
- SQLite: bytes this process passed to write() (`wchar` in /proc/self/io): WAL frames.
- Redis: bytes the server received (`total_net_input_bytes`) and AOF growth.
- PostgreSQL: WAL bytes the server generated (`pg_current_wal_insert_lsn`): what a
  replica or a backup streams; the table pages follow at checkpoints.
"payload" is what tether sent (head + changed messages); "full JSON" is what a storage
that rewrites the whole state after every reply would write. "save + load" is one
`update_session_state` plus one `get_session` of the session (p50 of each, added): what a
stateless worker pays per request at that length (issue 20 tracks the 200-message row).
The last column is the same in CPU time of this process (`time.process_time`, all its
threads): on a loaded machine wall-clock medians swing severalfold, CPU time much less.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from tether.app.storage import (
    PostgresStorage,
    RedisStorage,
    SessionDelta,
    SQLiteStorage,
    StorageBase,
)
from tether.message import AssistantMsg, UserMsg
from tether.testing.storage_conformance import rich_state

REPLIES = 40
GETS = 20
WRITERS = 100
ROUNDS = 10


def wchar() -> int:
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("wchar:"):
            return int(line.split()[1])
    raise RuntimeError("no wchar in /proc/self/io")


def start_redis(directory: Path) -> tuple[subprocess.Popen[bytes], int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    proc = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--dir", str(directory),
         "--save", "", "--appendonly", "yes", "--appendfsync", "everysec"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
    )  # fmt: skip
    assert proc.stdout is not None
    for line in proc.stdout:
        if b"Ready to accept connections" in line:
            break
    proc.stdout.close()
    return proc, port


def start_postgres(directory: Path) -> tuple[Path, str] | None:
    """A private PostgreSQL (default settings) on a free port; None without the binaries."""
    import glob
    import os
    import pwd

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True)
    initdb = Path(found[0]) if found else (Path(p) if (p := shutil.which("initdb")) else None)
    if initdb is None:
        return None
    data = directory / "pg"
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    run_as: list[str] = []
    if os.geteuid() == 0:  # initdb refuses root
        entry = pwd.getpwnam("postgres")
        os.chown(directory, entry.pw_uid, entry.pw_gid)
        run_as = ["runuser", "-u", "postgres", "--"]
    subprocess.run(
        [*run_as, str(initdb), "-D", str(data), "-U", "postgres", "-A", "trust"],
        check=True, capture_output=True,
    )  # fmt: skip
    opts = f"-p {port} -c listen_addresses=127.0.0.1 -k {directory}"
    subprocess.run(
        [*run_as, str(initdb.parent / "pg_ctl"), "-D", str(data), "-w", "-o", opts,
         "-l", str(directory / "pg.log"), "start"],
        check=True, capture_output=True,
    )  # fmt: skip
    return data, f"postgresql://postgres@127.0.0.1:{port}/postgres"


def stop_postgres(data: Path) -> None:
    import glob
    import os

    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), reverse=True)
    pg_ctl = found[0] if found else shutil.which("pg_ctl") or "pg_ctl"
    run_as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
    subprocess.run(
        [*run_as, pg_ctl, "-D", str(data), "-m", "immediate", "stop"], capture_output=True
    )


def recording(storage: StorageBase) -> list[int]:
    sizes: list[int] = []
    original = storage._apply

    async def apply(key: Any, delta: SessionDelta) -> int:
        sizes.append(
            len(delta.head)
            + sum(len(b) for _, b in delta.changed)
            + sum(len(b) for b in delta.appended)
        )
        return await original(key, delta)

    storage._apply = apply  # type: ignore[method-assign]
    return sizes


class Meter:
    """Physical bytes for one backend."""

    def __init__(self, storage: StorageBase, client: aioredis.Redis | None, pg: Any = None) -> None:
        self.storage, self.client, self.pg = storage, client, pg

    async def read(self) -> tuple[int, int]:
        if self.pg is not None:
            cur = await self.pg.execute(
                "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '0/0')::bigint"
            )
            row = await cur.fetchone()
            return int(row[0]), 0
        if self.client is None:
            return wchar(), 0
        stats = await self.client.info("stats")
        persistence = await self.client.info("persistence")
        return int(stats["total_net_input_bytes"]), int(persistence["aof_current_size"])

    async def settle(self) -> None:
        if isinstance(self.storage, SQLiteStorage):
            db = sqlite3.connect(self.storage.path)
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            db.close()


async def replies(storage: StorageBase, meter: Meter, n: int) -> dict[str, Any]:
    sid = f"s{n}"
    state = (await storage.upsert_session("u", "a", sid, state=rich_state(n))).state
    await meter.settle()
    payload = recording(storage)
    latencies, update_cpu = [], []
    before = await meter.read()
    for i in range(REPLIES):
        state.add_message(UserMsg("user", f"question {i}: what changed in the deploy?"))
        state.add_message(AssistantMsg("agent", f"answer {i}: the config loader changed. " * 4))
        start, cpu = time.perf_counter(), time.process_time()
        await storage.update_session_state("u", "a", sid, state)
        latencies.append(time.perf_counter() - start)
        update_cpu.append(time.process_time() - cpu)
    after = await meter.read()
    gets, get_cpu = [], []
    for _ in range(GETS):
        start, cpu = time.perf_counter(), time.process_time()
        await storage.get_session("u", "a", sid)
        gets.append(time.perf_counter() - start)
        get_cpu.append(time.process_time() - cpu)
    return {
        "update_p50": statistics.median(latencies) * 1000,
        "update_p95": sorted(latencies)[int(0.95 * len(latencies))] * 1000,
        "bytes": (after[0] - before[0]) / REPLIES,
        "aof": (after[1] - before[1]) / REPLIES,
        "payload": sum(payload) / REPLIES,
        "full": len(state.model_dump_json()),
        "get_p50": statistics.median(gets) * 1000,
        "save_load": (statistics.median(latencies) + statistics.median(gets)) * 1000,
        "save_load_cpu": (statistics.median(update_cpu) + statistics.median(get_cpu)) * 1000,
        "update_cpu": statistics.median(update_cpu) * 1000,
        "get_cpu": statistics.median(get_cpu) * 1000,
    }


async def writers(storage: StorageBase) -> tuple[float, float]:
    """Saves per second of 100 concurrent writers: get + update cycles, then updates only."""
    states = [
        (await storage.upsert_session("w", "a", f"w{w}", state=rich_state(20))).state
        for w in range(WRITERS)
    ]

    async def cycle(w: int) -> None:
        for i in range(ROUNDS):
            record = await storage.get_session("w", "a", f"w{w}")
            assert record is not None
            record.state.add_message(UserMsg("user", f"q{i}"))
            record.state.add_message(AssistantMsg("agent", f"a{i}"))
            states[w] = record.state
            await storage.update_session_state("w", "a", f"w{w}", record.state)

    async def update(w: int) -> None:
        for i in range(ROUNDS):
            states[w].add_message(UserMsg("user", f"q{i}"))
            states[w].add_message(AssistantMsg("agent", f"a{i}"))
            await storage.update_session_state("w", "a", f"w{w}", states[w])

    rates = []
    for work in (cycle, update):
        start = time.perf_counter()
        await asyncio.gather(*(work(w) for w in range(WRITERS)))
        rates.append(WRITERS * ROUNDS / (time.perf_counter() - start))
    return rates[0], rates[1]


SIZES = (10, 200, 1000)
WITH_WRITERS = True


async def bench(
    name: str, storage: StorageBase, client: aioredis.Redis | None, pg: Any = None
) -> list[str]:
    rows = []
    async with storage:
        meter = Meter(storage, client, pg)
        for n in SIZES:
            r = await replies(storage, meter, n)
            aof = f"{r['aof']:.0f}" if client is not None else "-"
            rows.append(
                f"| {name} | {n} | {r['update_p50']:.2f} | {r['update_p95']:.2f} | "
                f"{r['bytes']:.0f} | {aof} | {r['payload']:.0f} | {r['full']:,} | "
                f"{r['get_p50']:.2f} | {r['save_load']:.2f} | {r['update_cpu']:.2f} + "
                f"{r['get_cpu']:.2f} = {r['save_load_cpu']:.2f} |"
            )
        if not WITH_WRITERS:
            return rows
        cycles, updates = await writers(storage)
    rows.append(f"| {name} | {WRITERS} writers, get+update | {cycles:,.0f} saves/s ||||||||")
    rows.append(f"| {name} | {WRITERS} writers, update only | {updates:,.0f} saves/s ||||||||")
    return rows


async def bench_postgres(tmp: Path) -> list[str]:
    """The PostgreSQL rows, on a server of its own (none without `initdb`)."""
    import psycopg

    started = start_postgres(tmp)
    if started is None:
        print("PostgreSQL rows left out: initdb/pg_ctl are not installed", file=sys.stderr)
        return []
    data, dsn = started
    try:
        async with await psycopg.AsyncConnection.connect(dsn, autocommit=True) as pg:
            return await bench("PostgreSQL", PostgresStorage(dsn, schema="bench"), None, pg)
    finally:
        stop_postgres(data)


async def main() -> None:
    tmp = Path(tempfile.mkdtemp(prefix="tether-bench-"))
    redis_proc, port = start_redis(tmp)
    client = aioredis.Redis(host="127.0.0.1", port=port)
    try:
        rows = await bench("SQLite", SQLiteStorage(tmp / "bench.db"), None)
        rows += await bench("Redis", RedisStorage(port=port, key_prefix="bench"), client)
        rows += await bench_postgres(tmp)
    finally:
        await client.aclose()
        redis_proc.kill()
        redis_proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"python {sys.version.split()[0]}, {REPLIES} replies per row (user + assistant message)")
    print(
        "| backend | messages | update p50 ms | update p95 ms | bytes/reply (SQLite: written,"
        " Redis: received, PostgreSQL: WAL) | Redis AOF bytes/reply | payload bytes/reply | full JSON bytes |"
        " get p50 ms | save + load ms | CPU ms of this process: save + load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for row in rows:
        print(row)


def history_main(args: argparse.Namespace) -> None:
    """`--history`: save points at a small and a long context (see `_history.py`)."""
    import _history

    tmp = Path(tempfile.mkdtemp(prefix="tether-bench-"))
    redis_proc, port = start_redis(tmp)
    try:
        sizes = tuple(args.messages) if args.messages else (6, 2000)
        if args.cpu:
            _history.cpu_report(sizes, args.many, port)
            return
        trees = [tuple(t.split("=", 1)) for t in args.tree] or [
            ("this", str(Path(__file__).resolve().parent.parent / "src"))
        ]
        _history.report(trees, sizes, args.few, args.many, port)  # type: ignore[arg-type]
    finally:
        redis_proc.kill()
        redis_proc.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--history-child"]:
        import _history

        _history.child(sys.argv[2:])
        sys.exit(0)
    parser = argparse.ArgumentParser()
    parser.add_argument("--messages", type=int, action="append", help="a session length")
    parser.add_argument("--no-writers", action="store_true", help="skip the 100-writer rows")
    parser.add_argument("--history", action="store_true", help="save points vs history length")
    parser.add_argument("--cpu", action="store_true", help="--history: CPU time, not valgrind")
    parser.add_argument("--tree", action="append", default=[], help="--history: LABEL=SRC_DIR")
    parser.add_argument("--few", type=int, default=10, help="--history: rounds of the short run")
    parser.add_argument("--many", type=int, default=40, help="--history: rounds of the long run")
    args = parser.parse_args()
    if args.history:
        history_main(args)
        sys.exit(0)
    SIZES = tuple(args.messages) if args.messages else SIZES
    WITH_WRITERS = not args.no_writers
    asyncio.run(main())
