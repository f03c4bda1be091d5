"""Fault injection with real processes: SIGKILL at every save point and inside every tool.

The reply: one model step with two concurrent tools (`lookup`, idempotent; `charge`) and a
serial one (`ship`), then a final model step. A fresh process continues from storage.
"""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from crash_helpers import KEY, Place, log_lines, place, run_worker

from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock

SAVE_POINTS = 7  # start, model step with batch 1 (one write), 2 results, batch 2, 1 result,
# the final model step with the end (one write)
KILLS = [
    *[("save", n, "before") for n in range(1, SAVE_POINTS + 1)],
    *[("save", n, "after") for n in range(1, SAVE_POINTS + 1)],
    *[("tool", name, "") for name in ("lookup", "charge", "ship")],
]


def test_the_scenario_has_the_save_points_counted(tmp_path: Path) -> None:
    import asyncio

    async def go() -> list[str]:
        async with place("sqlite", tmp_path) as where:
            async with where.storage() as storage:
                await storage.upsert_session(*KEY)
            log = tmp_path / "log"
            out = run_worker(where.config(log=str(log), mode="start"))
            assert out.returncode == 0, out.stderr
            assert out.stdout.strip() == "DONE all done"
            return log_lines(log)

    lines = asyncio.run(go())
    assert [line for line in lines if line.startswith("saved")][-1] == f"saved {SAVE_POINTS}"


async def _check(where: Place, log: Path, killed_tool: str | None) -> None:
    async with where.storage() as storage:
        record = await storage.get_session(*KEY)
    assert record is not None
    state = record.state
    assert state.reply is None, "the reply completed"
    reply = state.context[-1]
    assert reply.role == "assistant" and reply.get_text_content() == "all done"
    calls = [b for b in reply.content if isinstance(b, ToolCallBlock)]
    results = [b for b in reply.content if isinstance(b, ToolResultBlock)]
    assert sorted(c.name for c in calls) == ["charge", "lookup", "ship"]
    assert all(c.state is ToolCallState.FINISHED for c in calls)
    assert sorted(r.id for r in results) == sorted(c.id for c in calls), "one result per call"
    lines = log_lines(log)
    assert "malformed request" not in lines
    for name in ("charge", "ship"):
        starts = [line for line in lines if line.startswith(f"start {name} ")]
        assert len(starts) <= 1, f"{name} started twice: {lines}"
    assert [m.role for m in state.context] == ["user", "assistant"]
    by_name = {r.name: r for r in results}
    if killed_tool in ("charge", "ship"):  # never run again: the model is told to check
        assert by_name[killed_tool].state.value == "interrupted"
        assert "unknown" in str(by_name[killed_tool].output)
    if killed_tool == "lookup":  # idempotent: run again, and it succeeded
        assert len([line for line in lines if line.startswith("start lookup ")]) == 2
        assert by_name["lookup"].state.value == "success"


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
@pytest.mark.parametrize(("where_", "point", "when"), KILLS)
async def test_killed_anywhere_a_fresh_process_finishes_without_running_a_tool_twice(
    backend: str, where_: str, point: int | str, when: str, tmp_path: Path
) -> None:
    async with place(backend, tmp_path) as where:
        async with where.storage() as storage:
            await storage.upsert_session(*KEY)
        log = tmp_path / "log"
        kill = {"kill_save": point, "kill_when": when} if where_ == "save" else {"kill_tool": point}
        first = run_worker(where.config(log=str(log), mode="start", **kill))
        assert first.returncode == -signal.SIGKILL, first.stdout + first.stderr
        second = run_worker(where.config(log=str(log), mode="continue"))
        assert second.returncode == 0, second.stderr
        await _check(where, log, str(point) if where_ == "tool" else None)
