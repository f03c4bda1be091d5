"""A reply logs its events in one write per save point: no renewal without events to log.

Each save point appends the events queued since the last one and renews the lease in the
same step; a renewal of its own only when none started since the last save point. The
events after the save that ends the reply go with the release (which checks the lease).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from svc_agents import make_agent

from tether.app.server import _runs
from tether.app.server._runs import Runs, SessionRef
from tether.app.server._stream import follow
from tether.app.storage import Lease, LogItem, SQLiteEventLog, SQLiteStorage
from tether.message import UserMsg


async def _reply(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[int], int, list[str]]:
    storage, log = SQLiteStorage(tmp_path / "s.db"), SQLiteEventLog(tmp_path / "e.db")
    renewals: list[int] = []  # how many events each renewal logged
    saves = 0
    renew, update = log.renew, storage._saving  # every save, checkpoint or not, goes there

    async def counted_renew(lease: Lease, ttl: float, items: Sequence[LogItem] = ()) -> bool:
        renewals.append(len(items))
        return await renew(lease, ttl, items)

    async def counted_update(*args: Any, **kwargs: Any) -> int:
        nonlocal saves
        saves += 1
        return await update(*args, **kwargs)

    async def no_heartbeat(self: Runs, run: object) -> None:
        """The timed renewals are not what this test counts."""

    monkeypatch.setattr(log, "renew", counted_renew)
    monkeypatch.setattr(storage, "_saving", counted_update)
    monkeypatch.setattr(Runs, "_heartbeat", no_heartbeat)
    monkeypatch.setattr(_runs, "_LINGER", 3600.0)  # only the save points write
    async with storage, log:
        runs = Runs({"planner": make_agent(0.01)}, storage, log)
        await storage.upsert_session("local", "planner", "s1")
        ref = SessionRef("local", "planner", "s1")
        plan = json.dumps([[["tick", {"n": 1}], ["tick", {"n": 2}]], "both ticked"])
        lease = await runs.start(ref, UserMsg("user", plan))
        types = [
            e.type
            async for batch in follow(log, ref.key, lease.start_seq, token=lease.token)
            for e in batch
        ]
        await runs.close()
    return renewals, saves, types


def test_a_reply_renews_the_lease_only_with_events_to_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TETHER_TEST_DIR", str(tmp_path))
    renewals, saves, types = asyncio.run(_reply(tmp_path, monkeypatch))
    assert types[0] == "reply_start" and types[-1] == "reply_end"
    assert types.count("tool_result_end") == 2
    assert saves >= 5  # the save points of 2 model steps and 2 tool results
    assert renewals and 0 not in renewals  # every renewal carried events
    # One write per save point but the first (nothing logged yet) and the last: the final
    # model step is saved with the end, so the release logs the last result's event (it
    # follows that result's save), the step's events and REPLY_END.
    assert len(renewals) == saves - 2
    last_result = max(i for i, kind in enumerate(types) if kind == "tool_result_end")
    assert sum(renewals) == last_result
    assert types[last_result + 1] == "model_call_start"
