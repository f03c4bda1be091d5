"""`examples/worker_checkpoint.py`: a worker serving one stored session with checkpoints."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

from tether.app.storage import SQLiteStorage
from tether.message import AssistantMsg, UserMsg
from tether.state import ReplyCursor

EXAMPLE = Path(__file__).parents[2] / "examples" / "worker_checkpoint.py"
KEY = ("user_1", "agent_1", "session_1")


def _run(*args: str) -> str:
    out = subprocess.run(
        [sys.executable, str(EXAMPLE), *args], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def test_the_worker_serves_the_stored_session_turn_after_turn(tmp_path: Path) -> None:
    db = str(tmp_path / "sessions.db")
    assert _run(db, "first") == "Done: first (2 messages stored)"
    assert _run(db, "second") == "Done: second (4 messages stored)"


def test_the_worker_continues_a_reply_a_crashed_worker_left(tmp_path: Path) -> None:
    db = tmp_path / "sessions.db"

    async def crashed_after_the_first_save_point() -> None:
        async with SQLiteStorage(db) as storage:
            record = await storage.upsert_session(*KEY)
            state = record.state
            state.add_message(UserMsg("user", "lost worker's question"))
            state.add_message(AssistantMsg("worker", [], id="r1"))
            state.reply = ReplyCursor(reply_id="r1")
            await storage.update_session_state(*KEY, state)

    asyncio.run(crashed_after_the_first_save_point())
    assert _run(str(db), "ignored") == "Done: ignored (2 messages stored)"

    async def stored() -> list[str | None]:
        async with SQLiteStorage(db) as storage:
            record = await storage.get_session(*KEY)
            assert record is not None and record.state.reply is None
            return [m.get_text_content() for m in record.state.context]

    assert asyncio.run(stored()) == ["lost worker's question", "Done: ignored"]
