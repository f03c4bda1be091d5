"""SQLiteStorage specifics: WAL, O(Δ) rows, corrupted rows, locks, schema versions."""

from __future__ import annotations

import os
import sqlite3
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from storage_helpers import sqlite_rows

from tether.app.storage import DEFAULT_SQLITE_PATH, SQLiteStorage
from tether.errors import SessionCorruptedError, StateVersionError, StorageUnavailableError
from tether.message import AssistantMsg, TextBlock, UserMsg
from tether.state import SCHEMA_VERSION, AgentState, register_migration
from tether.state import _migrate as migrate_module
from tether.testing.storage_conformance import rich_state

U, A, S = "u", "a", "s"


def raw(path: Path) -> sqlite3.Connection:
    return sqlite3.connect(path, isolation_level=None)


async def test_the_database_runs_in_wal_mode(tmp_path: Path) -> None:
    async with SQLiteStorage(tmp_path / "db" / "s.db") as storage:
        await storage.upsert_session(U, A, S)
    with raw(tmp_path / "db" / "s.db") as db:
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_the_default_path_is_under_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    async with SQLiteStorage() as storage:
        await storage.upsert_session(U, A, S)
    assert (tmp_path / DEFAULT_SQLITE_PATH).is_file()


async def test_methods_open_the_storage_on_first_use(tmp_path: Path) -> None:
    storage = SQLiteStorage(tmp_path / "s.db")
    try:
        assert await storage.get_session(U, A, S) is None
        await storage.upsert_session(U, A, S)
    finally:
        await storage.close()
    async with SQLiteStorage(tmp_path / "s.db") as again:
        assert await again.get_session(U, A, S) is not None


@pytest.mark.parametrize("messages", [10, 1000])
async def test_a_reply_touches_the_same_rows_at_any_length(tmp_path: Path, messages: int) -> None:
    async with SQLiteStorage(tmp_path / "s.db") as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(messages))).state
        db = storage._file._db
        assert db is not None
        before = db.total_changes
        state.add_message(UserMsg("user", "next question"))
        state.add_message(AssistantMsg("agent", "an answer"))
        await storage.update_session_state(U, A, S, state)
        assert db.total_changes - before == 3  # the head row and two message rows
        before = db.total_changes
        block = state.context[-1].content[0]
        assert isinstance(block, TextBlock)
        block.text += " that grew"  # the reply keeps growing
        await storage.update_session_state(U, A, S, state)
        assert db.total_changes - before == 2
        before = db.total_changes
        state.replace_context(state.context[-2:], "summary")  # compression: one rewrite
        await storage.update_session_state(U, A, S, state)
        assert db.total_changes - before == 1 + messages + 2  # head, truncation, rewrite
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == state


async def _two_sessions(path: Path) -> AgentState:
    async with SQLiteStorage(path) as storage:
        await storage.upsert_session(U, A, S, state=rich_state())
        return (await storage.upsert_session(U, A, "healthy", state=rich_state(3))).state


@pytest.mark.parametrize(
    "sql",
    [
        "UPDATE tether_sessions SET head = x'7b6e6f74206a736f6e' WHERE session_id = 's'",
        "UPDATE tether_sessions SET head = '[1, 2]' WHERE session_id = 's'",
        "UPDATE tether_sessions SET head = '{\"plugins\": 3}' WHERE session_id = 's'",
        # the messages are stored apart: a head that carries a context of its own is damaged
        "UPDATE tether_sessions SET head = json_set(head, '$.context', json('[]'))"
        " WHERE session_id = 's'",
        "UPDATE tether_sessions SET metadata = 'oops' WHERE session_id = 's'",
        "UPDATE tether_sessions SET created_at = 'yesterday' WHERE session_id = 's'",
        "UPDATE tether_messages SET body = 'garbage' WHERE seq = 0 AND sid = 1",
        "DELETE FROM tether_messages WHERE seq = 1 AND sid = 1",
    ],
)
async def test_a_corrupted_row_names_its_key_and_spares_the_others(
    tmp_path: Path, sql: str
) -> None:
    path = tmp_path / "s.db"
    healthy = await _two_sessions(path)
    with raw(path) as db:
        db.execute(sql)
    async with SQLiteStorage(path) as storage:
        with pytest.raises(SessionCorruptedError, match=r"session_id='s'.*s\.db") as info:
            await storage.get_session(U, A, S)
        assert "delete_session" in str(info.value)
        other = await storage.get_session(U, A, "healthy")
        assert other is not None and other.state == healthy
        assert await storage.delete_session(U, A, S)  # the way out the message names
        assert await storage.get_session(U, A, S) is None


async def test_a_future_schema_version_is_refused_clearly(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    await _two_sessions(path)
    with raw(path) as db:
        db.execute(
            "UPDATE tether_sessions SET head = json_set(head, '$.schema_version', 99)"
            " WHERE session_id = 's'"
        )
    async with SQLiteStorage(path) as storage:
        with pytest.raises(StateVersionError, match=r"session_id='s'.*schema_version 99"):
            await storage.get_session(U, A, S)
        assert await storage.get_session(U, A, "healthy") is not None


async def test_an_old_schema_version_goes_through_the_migration_hook(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    saved = await _two_sessions(path)
    with raw(path) as db:
        db.execute(
            "UPDATE tether_sessions SET head = json_set(json_remove(head, '$.summary'),"
            " '$.schema_version', 0, '$.old_summary', 'from v0') WHERE session_id = 'healthy'"
        )
        # Bodies as a version before 3 wrote them: each message's full JSON, not the compact form.
        sid = db.execute("SELECT sid FROM tether_sessions WHERE session_id = 'healthy'").fetchone()
        for seq, msg in enumerate(saved.context):
            db.execute(
                "UPDATE tether_messages SET body = ? WHERE sid = ? AND seq = ?",
                (msg.model_dump_json().encode(), sid[0], seq),
            )

    def v0_to_v1(obj: dict[str, Any]) -> dict[str, Any]:
        obj["summary"] = obj.pop("old_summary")
        return obj

    register_migration(0, v0_to_v1)
    try:
        async with SQLiteStorage(path) as storage:
            record = await storage.get_session(U, A, "healthy")
            assert record is not None and record.state.summary == "from v0"
            assert record.state.context == saved.context
            await storage.update_session_state(U, A, "healthy", record.state)
        with raw(path) as db:
            head = db.execute(
                "SELECT head FROM tether_sessions WHERE session_id = 'healthy'"
            ).fetchone()[0]
        assert b'"schema_version":%d' % SCHEMA_VERSION in head and b"old_summary" not in head
    finally:
        migrate_module._MIGRATIONS.pop(0, None)


async def test_a_locked_database_is_unavailable_and_nothing_is_written(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    async with SQLiteStorage(path, busy_timeout=0.05) as storage:
        state = (await storage.upsert_session(U, A, S)).state
        blocker = raw(path)
        blocker.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        try:
            state.add_message(UserMsg("user", "blocked"))
            with pytest.raises(StorageUnavailableError, match=r"s\.db.*nothing was written"):
                await storage.update_session_state(U, A, S, state)
        finally:
            blocker.execute("ROLLBACK")
            blocker.close()
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 1 and loaded.state.context == []
        assert await storage.update_session_state(U, A, S, state) == 2


async def test_an_unusable_path_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "file").write_text("not a directory")
    with pytest.raises(StorageUnavailableError, match="file/s.db"):
        async with SQLiteStorage(tmp_path / "file" / "s.db"):
            pass
    (tmp_path / "junk.db").write_bytes(b"this is not a database" * 100)
    with pytest.raises(StorageUnavailableError, match="junk.db"):
        async with SQLiteStorage(tmp_path / "junk.db"):
            pass


async def test_an_in_memory_database_works(tmp_path: Path) -> None:
    async with SQLiteStorage(":memory:") as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state())).state
        state.add_message(UserMsg("user", "x"))
        assert await storage.update_session_state(U, A, S, state) == 2
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == state


@contextmanager
def read_only(folder: Path) -> Iterator[None]:
    """Make a directory unwritable: the immutable flag for root (who ignores modes), else modes."""
    if os.geteuid() == 0:
        subprocess.run(["chattr", "+i", str(folder)], check=True)
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(folder)], check=True)
    else:
        mode = folder.stat().st_mode
        folder.chmod(0o555)
        try:
            yield
        finally:
            folder.chmod(mode)


async def test_a_read_only_directory_is_unavailable_and_left_untouched(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    path = folder / "s.db"
    async with SQLiteStorage(path) as storage:
        saved = (await storage.upsert_session(U, A, S, state=rich_state())).state
    before = sqlite_rows(path)
    with read_only(folder):
        for target in (path, folder / "new.db", folder / "sub" / "new.db"):
            with pytest.raises(StorageUnavailableError, match="writable file") as info:
                async with SQLiteStorage(target):
                    pass
            assert str(target) in str(info.value)
        assert os.listdir(folder) == ["s.db"]
    assert sqlite_rows(path) == before
    async with SQLiteStorage(path) as storage:  # writable again: nothing was lost
        record = await storage.get_session(U, A, S)
        assert record is not None and record.state == saved
