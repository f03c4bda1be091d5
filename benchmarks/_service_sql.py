"""The SQL of served replies on raw `sqlite3`, for `service_bound.py` (run under cachegrind).

One reply of `service_load.py`'s agent is recorded once, in this process, before anything
is counted: its events' JSON, its save points' heads and changed message bodies, and where
the save points fall between the events. Then `REPLIES` replies replay tether's SQL for it
on raw `sqlite3` with those bytes: no serialisation, no planning, no checks, no event loop.
Two modes:

- `now`: every statement `tether serve` runs for a reply on SQLite (read off its trace), in
  its transactions, on its two files (sessions, event log): take the lease; fence the
  session; at each save point but the last, the events since the previous one appended
  (their own transaction) before the save; release the lease with the held-back events and
  the end marker; the follower's read of the tail and the session's agent lookup (13
  transactions; the follower's first read is answered from memory).
- `merged`: the least SQL that keeps the same guarantees: one file; lease and fence in one
  transaction; each save point's events inserted in its save's transaction; the release in
  the last one; the log read from memory (nothing read back).

    python benchmarks/_service_sql.py now|merged REPLIES
"""

from __future__ import annotations

import asyncio
import sqlite3
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
USER, AGENT = "local", "bench"
_HEAD = "user_id = ? AND session_id = ?"
_BY_KEY = "user_id = ? AND agent_id = ? AND session_id = ?"

Save = tuple[bytes, list[bytes]]
"""A save point's head and the bodies it writes (the last ones of the context)."""


def record() -> tuple[list[list[tuple[str, str]]], list[Save]]:
    """One reply's events grouped by the save point they are logged before (the last group
    is logged with the release), and its save points."""
    sys.path.insert(0, str(HERE))
    from service_load import _agent

    from tether.app.storage._codec import dump_head, dump_message
    from tether.message import UserMsg
    from tether.state import AgentState

    groups: list[list[tuple[str, str]]] = [[]]
    saves: list[Save] = []

    async def checkpoint(state: AgentState) -> None:
        written = state.context[-2:] if not saves else state.context[-1:]
        saves.append((dump_head(state), [dump_message(m) for m in written]))
        groups.append([])

    async def run() -> None:
        agent = _agent(0.0)
        stream = agent.reply_stream(UserMsg("user", "look both up"), checkpoint=checkpoint)
        async for event in stream:
            groups[-1].append((str(event.type), event.model_dump_json()))

    asyncio.run(run())
    # Events of the last save point's step and after it are held back until the release.
    held = groups[-2] + groups[-1]
    return [*groups[:-2], held], saves


def _connect(path: str, schema: str) -> sqlite3.Connection:
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = NORMAL")
    db.executescript(schema)
    return db


def _schemas() -> tuple[str, str]:
    from tether.app.storage import _events_sqlite, _sqlite

    return _sqlite._SCHEMA, _events_sqlite._SCHEMA


class Replay:
    """Replies replayed on raw `sqlite3`, one session per `session()`."""

    def __init__(self, mode: str, directory: str) -> None:
        sessions, events = _schemas()
        self.mode = mode
        self.s = _connect(f"{directory}/sessions.db", sessions)
        self.e = self.s if mode == "merged" else _connect(f"{directory}/events.db", events)
        if mode == "merged":
            self.s.executescript(events)
        self.groups, self.saves = record()
        self.sid = ""
        self.token = self.version = self.seq = self.n = 0

    def session(self, number: int) -> None:
        self.sid = f"s{number:08d}"
        self.s.execute(
            "INSERT INTO tether_sessions (user_id, agent_id, session_id, version, head, n,"
            " created_at, updated_at, metadata) VALUES (?, ?, ?, 1, x'', 0, 't', 't', '{}')",
            (USER, AGENT, self.sid),
        )
        self.e.execute(
            "INSERT INTO tether_event_heads (user_id, session_id, agent_id) VALUES (?, ?, ?)",
            (USER, self.sid, AGENT),
        )
        self.version, self.seq, self.n = 1, 0, 0

    def reply(self) -> None:
        ids = (USER, self.sid)
        merged = self.mode == "merged"
        self._acquire(ids, fence_too=merged)
        if not merged:
            self._fence()
        last = len(self.saves) - 1
        for i, (head, bodies) in enumerate(self.saves):
            events = self.groups[i] if i < last else []
            if merged:
                self.s.execute("BEGIN IMMEDIATE")
                if events:
                    self._append(ids, events)
                self._save(head, bodies)
                if i == last:
                    self._release(ids, self.groups[-1])
                self.s.execute("COMMIT")
                continue
            if events:
                self.e.execute("BEGIN IMMEDIATE")
                self._append(ids, events)
                self.e.execute("COMMIT")
            self.s.execute("BEGIN IMMEDIATE")
            self._save(head, bodies)
            self.s.execute("COMMIT")
        if not merged:
            self.e.execute("BEGIN IMMEDIATE")
            self._release(ids, self.groups[-1])
            self.e.execute("COMMIT")
            self._read(ids)
            self.e.execute("BEGIN")
            self.e.execute(f"SELECT agent_id FROM tether_event_heads WHERE {_HEAD}", ids).fetchone()
            self.e.execute("COMMIT")

    def _acquire(self, ids: tuple[str, str], *, fence_too: bool) -> None:
        e = self.e
        e.execute("BEGIN IMMEDIATE")
        e.execute(
            "INSERT OR IGNORE INTO tether_event_heads (user_id, session_id) VALUES (?, ?)", ids
        )
        row = e.execute(
            f"SELECT last_seq, token, holder, reply_id, expires FROM tether_event_heads WHERE {_HEAD}",
            ids,
        ).fetchone()
        self.token = row[1] + 1
        e.execute(
            "UPDATE tether_event_heads SET token = ?, holder = 1, reply_id = '', expires = ?,"
            f" interrupt = 0 WHERE {_HEAD}",
            (self.token, time.time() + 15, *ids),
        )
        if fence_too:
            self._fence_statement()
        e.execute("COMMIT")

    def _fence(self) -> None:
        self.s.execute("BEGIN IMMEDIATE")
        self._fence_statement()
        self.s.execute("COMMIT")

    def _fence_statement(self) -> None:
        self.s.execute(
            f"UPDATE tether_sessions SET fence = ? WHERE {_BY_KEY} AND fence <= ?"
            " RETURNING version, CAST(created_at AS BLOB)",
            (self.token, USER, AGENT, self.sid, self.token),
        ).fetchone()

    def _append(self, ids: tuple[str, str], events: list[tuple[str, str]]) -> None:
        row = self.e.execute(
            "UPDATE tether_event_heads SET expires = ?, last_seq = last_seq + ?,"
            f" reply_id = coalesce(?, reply_id) WHERE {_HEAD} AND token = ? AND holder = 1"
            " RETURNING last_seq, interrupt",
            (time.time() + 15, len(events), "r", *ids, self.token),
        ).fetchone()
        self._insert(ids, row[0] - len(events), events)

    def _insert(self, ids: tuple[str, str], last: int, events: list[tuple[str, str]]) -> None:
        self.e.executemany(
            "INSERT INTO tether_events (user_id, session_id, seq, type, data)"
            " VALUES (?, ?, ?, ?, ?)",
            [(*ids, last + i, kind, data) for i, (kind, data) in enumerate(events, 1)],
        )
        self.seq = last + len(events)

    def _save(self, head: bytes, bodies: list[bytes]) -> None:
        start = self.n if len(bodies) > 1 or self.n == 0 else self.n - 1
        count = start + len(bodies)
        sid, self.version = self.s.execute(
            "UPDATE tether_sessions SET version = version + 1, head = ?, n = ?,"
            f" updated_at = ?, fence = max(fence, ?) WHERE {_BY_KEY} AND version = ?"
            " AND created_at = ? AND fence <= ? RETURNING sid, version",
            (head, count, "2026-12-07T00:00:00+00:00", self.token, USER, AGENT, self.sid,
             self.version, "t", self.token),
        ).fetchone()  # fmt: skip
        self.s.executemany(
            "INSERT OR REPLACE INTO tether_messages (sid, seq, body) VALUES (?, ?, ?)",
            [(sid, start + j, body) for j, body in enumerate(bodies)],
        )
        self.n = count

    def _release(self, ids: tuple[str, str], events: list[tuple[str, str]]) -> None:
        e = self.e
        e.execute(
            f"SELECT token, holder, last_seq, interrupt FROM tether_event_heads WHERE {_HEAD}", ids
        ).fetchone()
        self._insert(ids, self.seq, [*events, ("", str(self.token))])
        e.execute(f"UPDATE tether_event_heads SET last_seq = ?, reply_id = ? WHERE {_HEAD}",
                  (self.seq, "", *ids))  # fmt: skip
        e.execute(
            f"UPDATE tether_event_heads SET holder = 0, expires = 0, interrupt = 0 WHERE {_HEAD}",
            ids,
        )

    def _read(self, ids: tuple[str, str]) -> Any:
        self.e.execute("BEGIN")
        rows = self.e.execute(
            f"SELECT seq, type, data FROM tether_events WHERE {_HEAD} AND seq > ?"
            " ORDER BY seq LIMIT ?",
            (*ids, self.seq, 500),
        ).fetchall()
        self.e.execute("COMMIT")
        return rows


REPLIES_PER_SESSION = 8
"""As in `service_load.py --instructions`: 10 clients, 80 replies."""


def main(mode: str, replies: int) -> None:
    with tempfile.TemporaryDirectory() as directory:
        replay = Replay(mode, directory)
        for i in range(replies):
            if i % REPLIES_PER_SESSION == 0:
                replay.session(i)
            replay.reply()
        replay.s.close()
        if replay.e is not replay.s:
            replay.e.close()


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
