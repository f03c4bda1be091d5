"""Two worker processes race on one session: the storage checkpoint lets exactly one act."""

from __future__ import annotations

from pathlib import Path

import pytest
from crash_helpers import KEY, log_lines, place, start_worker

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(requires_confirmation=True)
async def transfer(amount: int) -> str:
    """Transfer money (asks first)."""
    raise AssertionError("only the workers run it")


def _race(configs: list[dict[str, object]]) -> list[str]:
    """Start the workers, let them all go at once (after each loaded), return their verdicts."""
    workers = [start_worker(c) for c in configs]
    try:
        for w in workers:
            assert w.stdout is not None and w.stdout.readline().strip() == "READY"
        for w in workers:  # the barrier: every worker has loaded the same version
            assert w.stdin is not None
            w.stdin.write("go\n")
            w.stdin.flush()
        outs = [w.communicate(timeout=60) for w in workers]
    finally:
        for w in workers:
            if w.poll() is None:
                w.kill()
                w.wait()
    for w, (_, err) in zip(workers, outs, strict=True):
        assert w.returncode == 0, err
    return [out.strip() for out, _ in outs]


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_two_workers_confirming_one_pause_run_the_tool_once(
    backend: str, tmp_path: Path
) -> None:
    async with place(backend, tmp_path) as where:
        call = ScriptedChatModel.tool_call("transfer", {"amount": 100}, id="t1")
        agent = Agent(
            "shop",
            "p",
            ScriptedChatModel([AssistantMsg("shop", [call])]),
            Toolkit(tools=[transfer]),
        )
        await agent.reply(UserMsg("user", "pay"))
        assert agent.state.pending is not None and agent.state.pending.is_paused
        async with where.storage() as storage:
            await storage.upsert_session(*KEY, state=agent.state)
        log = tmp_path / "log"
        verdicts = _race([where.config(log=str(log), mode="confirm")] * 2)
        assert sorted(verdicts) == ["CONFLICT", "DONE all done"]
        starts = [line for line in log_lines(log) if line.startswith("start")]
        assert [line.split()[1] for line in starts] == ["transfer"]
        async with where.storage() as storage:
            record = await storage.get_session(*KEY)
        assert record is not None and record.state.reply is None
        assert record.state.context[-1].get_text_content() == "all done"


@pytest.mark.parametrize("backend", ["sqlite", "redis"])
async def test_two_new_messages_on_one_idle_session_one_wins(backend: str, tmp_path: Path) -> None:
    async with place(backend, tmp_path) as where:
        async with where.storage() as storage:
            await storage.upsert_session(*KEY)
        log = str(tmp_path / "log")
        verdicts = _race([where.config(log=log, mode="message", text=name) for name in ("A", "B")])
        assert sorted(v.split()[0] for v in verdicts) == ["CONFLICT", "DONE"]
        winner = next(v for v in verdicts if v.startswith("DONE")).split()[-1]
        async with where.storage() as storage:
            record = await storage.get_session(*KEY)
        assert record is not None
        texts = [m.get_text_content() for m in record.state.context]
        assert texts == [winner, f"answered {winner}"]
