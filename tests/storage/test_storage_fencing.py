"""Fencing tokens: a worker whose lease was taken over cannot write the state any more."""

from __future__ import annotations

import pytest
from storage_helpers import Backend

from tether.app.storage import SQLiteStorage
from tether.errors import LeaseLostError, SessionInputError
from tether.message import UserMsg

U, A, S = "u", "a", "s"


async def test_a_stale_workers_write_is_refused_and_the_state_unchanged(backend: Backend) -> None:
    async with backend.make() as old_worker, backend.make() as new_worker:
        await old_worker.upsert_session(U, A, S)
        assert (await old_worker.fence_session(U, A, S, 1)).version == 1  # type: ignore[union-attr]
        stale = (await old_worker.get_session(U, A, S)).state  # type: ignore[union-attr]
        stale.add_message(UserMsg("user", "first"))
        assert await old_worker.update_session_state(U, A, S, stale, fence=1) == 2
        # The lease expires; another worker takes it over (token 2) and fences the session.
        assert (await new_worker.fence_session(U, A, S, 2)).version == 2  # type: ignore[union-attr]
        before = await backend.raw()
        stale.add_message(UserMsg("user", "written by the stale worker"))
        with pytest.raises(LeaseLostError, match=r"token 2.*token 1"):
            await old_worker.update_session_state(U, A, S, stale, fence=1)
        save = old_worker.checkpoint(U, A, S, fence=1)
        with pytest.raises(LeaseLostError):
            await save(stale)
        assert await backend.raw() == before
        record = await new_worker.get_session(U, A, S)
        assert record is not None and record.version == 2
        assert [m.get_text_content() for m in record.state.context] == ["first"]
        # The new holder writes on; an older token never fences the session back.
        record.state.add_message(UserMsg("user", "second"))
        assert await new_worker.update_session_state(U, A, S, record.state, fence=2) == 3
        with pytest.raises(LeaseLostError):
            await old_worker.fence_session(U, A, S, 1)


async def test_a_fenced_write_raises_the_fence(backend: Backend) -> None:
    """A worker that writes with a newer token (without `fence_session`) fences out the older."""
    async with backend.make() as storage:
        state = (await storage.upsert_session(U, A, S)).state
        state.add_message(UserMsg("user", "by token 5"))
        version = await storage.update_session_state(U, A, S, state, fence=5)
        state.add_message(UserMsg("user", "by token 4"))
        with pytest.raises(LeaseLostError):
            await storage.update_session_state(U, A, S, state, expected_version=version, fence=4)
        assert await storage.update_session_state(U, A, S, state, fence=5) == version + 1
        # Unfenced writes (the library, no lease) are checked by version only.
        state.add_message(UserMsg("user", "unfenced"))
        assert await storage.update_session_state(U, A, S, state) == version + 2


async def test_fence_of_a_missing_session_and_bad_tokens(backend: Backend) -> None:
    async with backend.make() as storage:
        assert await storage.fence_session(U, A, "missing", 3) is None
        state = (await storage.upsert_session(U, A, S)).state
        for bad in (0, -1, True, "1"):
            with pytest.raises(SessionInputError, match="fencing token"):
                await storage.fence_session(U, A, S, bad)  # type: ignore[arg-type]
            with pytest.raises(SessionInputError, match="fencing token"):
                await storage.update_session_state(U, A, S, state, fence=bad)  # type: ignore[arg-type]


async def test_a_file_from_before_fencing_gets_the_column(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import sqlite3

    path = tmp_path / "old.db"
    async with SQLiteStorage(path) as storage:
        state = (await storage.upsert_session(U, A, S)).state
    db = sqlite3.connect(path)
    db.execute("ALTER TABLE tether_sessions DROP COLUMN fence")  # as an older tether wrote it
    db.commit()
    db.close()
    async with SQLiteStorage(path) as storage:
        record = await storage.get_session(U, A, S)
        assert record is not None
        assert (await storage.fence_session(U, A, S, 7)).version == 1  # type: ignore[union-attr]
        with pytest.raises(LeaseLostError):
            await storage.update_session_state(U, A, S, record.state, fence=6)
    del state
