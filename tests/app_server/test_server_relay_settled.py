"""A settled MCP question takes no more answers, even one that found it just before."""

from __future__ import annotations

from pathlib import Path

from tether.app.server._relay import NotesRelay, Question
from tether.app.storage import LogKey, SQLiteNotes


async def test_an_answer_that_found_the_question_before_it_was_settled_is_refused(
    tmp_path: Path,
) -> None:
    notes = SQLiteNotes(tmp_path / "n.db")
    key = LogKey("u", "s")
    relay = NotesRelay(notes, key)
    await relay.announce("r1", "elicitation", "reply-1")
    found = await Question.find(notes, key, "r1")  # the answering worker sees the question
    assert found is not None and found.reply_id == "reply-1"
    await relay.forget("r1")  # meanwhile the call ends (timed out, cancelled, answered here)
    assert not await Question.answer(notes, key, "r1", {"action": "accept", "content": {}})
    assert await Question.find(notes, key, "r1") is None
    assert await relay.answer("r1") is None  # the closed slot reads as no answer
    await notes.close()


async def test_a_given_answer_stays_the_only_one_after_the_question_is_settled(
    tmp_path: Path,
) -> None:
    notes = SQLiteNotes(tmp_path / "n.db")
    key = LogKey("u", "s")
    relay = NotesRelay(notes, key)
    await relay.announce("r2", "sampling", "reply-2")
    assert await Question.answer(notes, key, "r2", {"approved": True})
    assert await relay.answer("r2") == {"approved": True}
    await relay.forget("r2")
    assert not await Question.answer(notes, key, "r2", {"approved": False})
    await notes.close()
