"""A settled MCP question takes no more answers, even one that found it just before."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest_asyncio

from tether.app.server._relay import NotesRelay, Question
from tether.app.storage import LogKey, SQLiteNotes

KEY = LogKey("u", "s")


@pytest_asyncio.fixture
async def notes(tmp_path: Path) -> AsyncIterator[SQLiteNotes]:
    store = SQLiteNotes(tmp_path / "n.db")
    yield store
    await store.close()


async def test_an_answer_that_found_the_question_before_it_was_settled_is_refused(
    notes: SQLiteNotes,
) -> None:
    relay = NotesRelay(notes, KEY)
    await relay.announce("r1", "elicitation", "reply-1")
    found = await Question.find(notes, KEY, "r1")  # the answering worker sees the question
    assert found is not None and found.reply_id == "reply-1"
    await relay.forget("r1")  # meanwhile the call ends (timed out, cancelled, answered here)
    assert not await Question.answer(notes, KEY, "r1", {"action": "accept", "content": {}})
    assert await Question.find(notes, KEY, "r1") is None
    assert await relay.answer("r1") is None  # the closed slot reads as no answer


async def test_a_given_answer_stays_the_only_one_after_the_question_is_settled(
    notes: SQLiteNotes,
) -> None:
    relay = NotesRelay(notes, KEY)
    await relay.announce("r2", "sampling", "reply-2")
    assert await Question.answer(notes, KEY, "r2", {"approved": True})
    assert await relay.answer("r2") == {"approved": True}
    await relay.forget("r2")
    assert not await Question.answer(notes, KEY, "r2", {"approved": False})
