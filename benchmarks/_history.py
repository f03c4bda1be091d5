"""`storage.py --history`: what one save point costs at 6 and at 2,000 prior messages.

A round is one reply's save points on a tracked state: the user's message appended
(save), the reply's message appended with a tool call (save), its result added to that
message in place (save), its final text added (save). Cases: SQLite and Redis at each
length, and raw `sqlite3` running the same SQL with the same bytes (the floor: tether's
head and bodies computed before the measured part); `checked` is that SQL after the save's
changes are made and its head and changed bodies serialised and checked in the measured
part (tether's serialisers and check, no planning of tether's own, no async layers): the
least a save that writes what it serialised and checks it can cost. The tether cases (and
`checked`) include making the round's messages (`step`); the `steps` case makes them
without saving, so a save's own cost is the difference (both are printed). Figures are instructions under
`valgrind --tool=cachegrind` (runs of `--many` minus runs of `--few` rounds, divided by the
extra saves), or with `--cpu`, CPU time per save in this process (noisy).
"""

from __future__ import annotations

import asyncio
import secrets
import sqlite3
import tempfile
import time
from pathlib import Path

import _valgrind

from tether.app.storage import RedisStorage, SQLiteStorage, StorageBase
from tether.message import (
    AssistantMsg,
    Msg,
    TextBlock,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.state import AgentState

SAVES_PER_ROUND = 4
PLANNED = 200
"""Rounds the raw case plans whatever it runs (so planning cancels out of the difference)."""
CASES = ("sqlite", "redis", "raw", "checked", "steps")


def prior(n: int) -> AgentState:
    """A state with `n` messages, shaped like a chat's history."""
    state = AgentState()
    for i in range(n // 2):
        state.add_message(UserMsg("user", f"question {i}: what changed in the deploy?"))
        state.add_message(AssistantMsg("agent", f"answer {i}: the config loader changed. " * 4))
    if n % 2:
        state.add_message(UserMsg("user", "one more thing"))
    return state


def step(state: AgentState, i: int, k: int) -> None:
    """Apply change `k` (0..3) of round `i` to `state`."""
    if k == 0:
        state.add_message(UserMsg("user", f"question {i}: and the tests?"))
    elif k == 1:
        state.add_message(
            Msg(
                name="agent",
                role="assistant",
                content=[
                    ToolCallBlock(
                        id=f"c{i}",
                        name="Bash",
                        input='{"command": "make test"}',
                        state=ToolCallState.RUNNING,
                    )
                ],
            )
        )
    elif k == 2:
        reply = state.context[-1]
        reply.content[0].state = ToolCallState.FINISHED  # type: ignore[union-attr]
        reply.content.append(ToolResultBlock(id=f"c{i}", name="Bash", output="42 passed"))
    else:
        state.context[-1].content.append(TextBlock(text=f"All {i} tests pass."))


async def _tether_saves(storage: StorageBase, n: int, rounds: int, timed: list[float]) -> None:
    sid = f"h{n}-{secrets.token_hex(3)}"
    async with storage:
        state = (await storage.upsert_session("u", "a", sid, state=prior(n))).state
        for i in range(rounds + 1):  # round 0 warms up
            for k in range(SAVES_PER_ROUND):
                step(state, i, k)
                cpu = time.process_time()
                await storage.update_session_state("u", "a", sid, state)
                if i:
                    timed.append(time.process_time() - cpu)
        await storage.delete_session("u", "a", sid)


def _steps_only(n: int, rounds: int, timed: list[float]) -> None:
    """The rounds' changes to a state of `n` messages, nothing saved (what the tether cases
    spend outside the save)."""
    state = prior(n)
    for i in range(rounds + 1):
        for k in range(SAVES_PER_ROUND):
            cpu = time.process_time()
            step(state, i, k)
            if i:
                timed.append(time.process_time() - cpu)


def _plan(
    state: AgentState, stored: list[bytes], check: bool
) -> tuple[bytes, int, list[tuple[int, bytes]]]:
    """What a save of `state` writes (head, message count, changed rows), as tether's bytes.

    With `check`, each written body is checked to load back, as tether's saves do.
    """
    from tether.app.storage._codec import dump_head, dump_message
    from tether.state._fastload import check_message_json

    bodies = [dump_message(m) for m in state.context[-2:]]
    start = len(state.context) - 2
    rows = [(start + j, b) for j, b in enumerate(bodies) if start + j >= len(stored)]
    rows += [
        (start + j, b)
        for j, b in enumerate(bodies)
        if start + j < len(stored) and stored[start + j] != b
    ]
    del stored[start:]
    stored += bodies
    if check:
        for _, body in rows:
            check_message_json(body)
    return dump_head(state), len(state.context), rows


def _raw_saves(path: str, n: int, rounds: int, timed: list[float], *, checked: bool) -> None:
    """The same SQL as `SQLiteStorage` with the same bytes.

    Planned before it is timed (`checked` False: the floor of the SQL alone), or, with
    `checked`, each save's changes made, its head and changed bodies serialised and
    checked in the timed part: the least a save that writes what it serialised and checks
    it can cost (its own cost is its figure minus `steps`).
    """
    from tether.app.storage._codec import dump_message

    state = prior(n)
    writes: list[tuple[bytes, int, list[tuple[int, bytes]]]] = []
    stored = [dump_message(m) for m in state.context]
    first = stored[:n]
    for i in range(0 if checked else PLANNED + 1):
        for k in range(SAVES_PER_ROUND):
            step(state, i, k)
            writes.append(_plan(state, stored, check=False))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.execute(
        "CREATE TABLE s (sid INTEGER PRIMARY KEY, user_id TEXT, agent_id TEXT, session_id TEXT,"
        " version INTEGER, head BLOB, n INTEGER, created_at TEXT, updated_at TEXT, fence INTEGER,"
        " UNIQUE (user_id, agent_id, session_id))"
    )
    db.execute(
        "CREATE TABLE m (sid INTEGER, seq INTEGER, body BLOB, PRIMARY KEY (sid, seq)) WITHOUT ROWID"
    )
    db.execute("INSERT INTO s VALUES (1, 'u', 'a', 's', 1, x'', 0, 't', 't', 0)")
    db.executemany("INSERT INTO m VALUES (1, ?, ?)", list(enumerate(first)))
    version = 1
    for w in range((rounds + 1) * SAVES_PER_ROUND):
        cpu = time.process_time()
        if checked:
            step(state, *divmod(w, SAVES_PER_ROUND))
            head, count, rows = _plan(state, stored, check=True)
        else:
            head, count, rows = writes[w]
        db.execute("BEGIN IMMEDIATE")
        cursor = db.execute(
            "UPDATE s SET version = version + 1, head = ?, n = ?, updated_at = ?,"
            " fence = max(fence, ?) WHERE user_id = ? AND agent_id = ? AND session_id = ?"
            " AND version = ? AND created_at = ? AND fence <= ? RETURNING sid, version",
            (head, count, "2026-01-01T00:00:00+00:00", 0, "u", "a", "s", version, "t", 0),
        )
        sid, version = cursor.fetchone()
        cursor.close()
        db.executemany(
            "INSERT OR REPLACE INTO m (sid, seq, body) VALUES (?, ?, ?)",
            [(sid, seq, body) for seq, body in rows],
        )
        db.execute("COMMIT")
        if w >= SAVES_PER_ROUND:
            timed.append(time.process_time() - cpu)
    db.close()


def workload(case: str, n: int, rounds: int, redis_port: int) -> list[float]:
    """Run `rounds` rounds of `case` at `n` prior messages; CPU seconds per timed save."""
    timed: list[float] = []
    with tempfile.TemporaryDirectory() as scratch:
        if case in ("raw", "checked"):
            _raw_saves(f"{scratch}/raw.db", n, rounds, timed, checked=case == "checked")
        elif case == "steps":
            _steps_only(n, rounds, timed)
        elif case == "sqlite":
            asyncio.run(_tether_saves(SQLiteStorage(f"{scratch}/h.db"), n, rounds, timed))
        else:
            storage = RedisStorage(port=redis_port, key_prefix=f"bench-{secrets.token_hex(4)}")
            asyncio.run(_tether_saves(storage, n, rounds, timed))
    return timed


def instructions(src: str, case: str, n: int, rounds: int, redis_port: int) -> int:
    """Instructions of one process running `rounds` rounds of `case`."""
    script = str(Path(__file__).with_name("storage.py"))
    return _valgrind.instructions(
        src, script, "--history-child", case, str(n), str(rounds), str(redis_port)
    )


def per_save(src: str, case: str, n: int, few: int, many: int, redis_port: int) -> float:
    """Instructions per save point (the difference of two runs)."""
    more = instructions(src, case, n, many, redis_port)
    less = instructions(src, case, n, few, redis_port)
    return (more - less) / ((many - few) * SAVES_PER_ROUND)


def report(
    trees: list[tuple[str, str]], sizes: tuple[int, ...], few: int, many: int, redis_port: int
) -> None:
    """Print instructions per save and the ratios the acceptance reads."""
    print(f"instructions per save point (runs of {many} minus {few} rounds of 4 saves)")
    print("a save's own cost: the case minus making the round's messages (`steps`)")
    print(
        "| tree | case | messages | instructions/save | own cost | × at smallest | × raw sqlite3 |"
    )
    print("|---|---|---|---|---|---|---|")
    raw = per_save(trees[0][1], "raw", sizes[0], few, many, redis_port)
    print(f"| - | raw sqlite3 | {sizes[0]} | {raw / 1e3:,.0f} k | - | - | 1.00 |", flush=True)
    checked = per_save(trees[0][1], "checked", sizes[0], few, many, redis_port)
    floor_steps = per_save(trees[0][1], "steps", sizes[0], few, many, redis_port)
    print(
        f"| - | raw sqlite3 + serialise + check | {sizes[0]} | {checked / 1e3:,.0f} k |"
        f" {(checked - floor_steps) / 1e3:,.0f} k | - | {checked / raw:.2f}"
        f" (own {(checked - floor_steps) / raw:.2f}) |",
        flush=True,
    )
    for label, src in trees:
        steps = {n: per_save(src, "steps", n, few, many, redis_port) for n in sizes}
        print(f"| {label} | steps | {sizes} | {[round(v / 1e3) for v in steps.values()]} k |")
        for case in ("sqlite", "redis"):
            small = 0.0
            for n in sizes:
                value = per_save(src, case, n, few, many, redis_port)
                own = value - steps[n]
                small = small or own
                print(
                    f"| {label} | {case} | {n} | {value / 1e3:,.0f} k | {own / 1e3:,.0f} k |"
                    f" {own / small:.2f} | {value / raw:.2f} (own {own / raw:.2f}) |",
                    flush=True,
                )


def cpu_report(sizes: tuple[int, ...], rounds: int, redis_port: int) -> None:
    """CPU microseconds per save (median), in this process."""
    import statistics

    print("| case | messages | CPU µs/save (median) |")
    print("|---|---|---|")
    for case in CASES:
        for n in sizes if case != "raw" else sizes[:1]:
            timed = workload(case, n, rounds, redis_port)
            print(f"| {case} | {n} | {statistics.median(timed) * 1e6:.1f} |", flush=True)


def child(args: list[str]) -> None:
    """Entry point inside valgrind."""
    case, n, rounds, port = args
    workload(case, int(n), int(rounds), int(port))
