"""What a save reuses instead of redoing: its time's text and the ids of the last save."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path

import pytest

from tether.app.storage import SQLiteStorage
from tether.app.storage._codec import save_time, time_text
from tether.errors import SessionInputError
from tether.message import UserMsg


def test_a_save_time_is_written_as_the_text_it_was_made_from() -> None:
    moment = save_time()
    text = time_text(moment)
    assert moment.tzinfo is UTC and datetime.fromisoformat(text) == moment
    other = datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(timedelta(hours=2)))
    assert time_text(other) == other.isoformat()  # not made by save_time: formatted
    assert time_text(moment.replace()) == moment.isoformat()  # an equal, other object


async def test_saves_keep_checking_new_ids_and_record_their_time(tmp_path: Path) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        state = (await storage.upsert_session("u", "a", "s")).state
        before = datetime.now(UTC)
        state.add_message(UserMsg("user", "hi"))
        assert await storage.update_session_state("u", "a", "s", state) == 2
        for bad in ("", "s\x00"):  # ids other than the last save's are checked again
            with pytest.raises(SessionInputError):
                await storage.update_session_state("u", "a", bad, state)
        assert await storage.update_session_state("u", "a", "s", state) == 3
        [info] = await storage.list_sessions("u")
        assert before - timedelta(seconds=1) <= info.updated_at <= datetime.now(UTC)
