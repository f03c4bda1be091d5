"""Damaged rows, on both backends: typed errors only, and the user's other sessions list.

Nesting 100,000 levels deep made `json.loads` raise `RecursionError` out of
`get_session`; a damaged row made `list_sessions` fail for every session of its user.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from storage_helpers import Backend, sqlite_path

from tether._json_depth import MAX_JSON_DEPTH, json_depth_exceeds
from tether.app.storage import RedisStorage, SessionKey, SQLiteStorage, StorageBase
from tether.errors import SessionCorruptedError, SessionInputError

U, A = "u", "a"
DEEP = "[" * 100_000 + "]" * 100_000


def nested(levels: int) -> Any:
    value: Any = "leaf"
    for _ in range(levels):
        value = [value]
    return value


async def _damage(backend: Backend, storage: StorageBase, session: str, part: str) -> None:
    """Replace the head, the first message or the metadata of `session` by deep nesting."""
    head = '{"schema_version": 2, "summary": ' + DEEP + "}"
    meta = '{"tags": ' + DEEP + "}"
    if backend.name == "sqlite":
        with sqlite3.connect(backend.path, isolation_level=None) as db:
            (sid,) = db.execute(
                "SELECT sid FROM tether_sessions WHERE session_id = ?", (session,)
            ).fetchone()
            if part == "head":
                db.execute("UPDATE tether_sessions SET head = ? WHERE sid = ?", (head, sid))
            elif part == "message":
                db.execute(
                    "UPDATE tether_messages SET body = ? WHERE sid = ? AND seq = 0", (DEEP, sid)
                )
            else:
                db.execute("UPDATE tether_sessions SET metadata = ? WHERE sid = ?", (meta, sid))
        return
    assert isinstance(storage, RedisStorage)
    head_key, msgs_key, _ = storage.keys_of(SessionKey(U, A, session))
    if part == "head":
        await backend.client.hset(head_key, "state", head)
    elif part == "message":
        await backend.client.lset(msgs_key, 0, DEEP)
    else:
        await backend.client.hset(head_key, "metadata", meta)


async def _two_sessions(storage: StorageBase) -> None:
    from tether.message import UserMsg
    from tether.state import AgentState

    for session in ("damaged", "healthy"):
        state = AgentState()
        state.add_message(UserMsg("user", f"hello from {session}"))
        await storage.upsert_session(U, A, session, state, metadata={"name": session})


@pytest.mark.parametrize("part", ["head", "message", "metadata"])
async def test_deep_nesting_is_a_corrupted_session_not_a_recursion_error(
    backend: Backend, part: str
) -> None:
    async with backend.make() as storage:
        await _two_sessions(storage)
        await _damage(backend, storage, "damaged", part)
        with pytest.raises(SessionCorruptedError, match=r"session_id='damaged'.*deeper than"):
            await storage.get_session(U, A, "damaged")
        healthy = await storage.get_session(U, A, "healthy")
        assert healthy is not None and healthy.metadata == {"name": "healthy"}
        listed = {i.session_id for i in await storage.list_sessions(U)}
        # The listing reads no head or message: only damaged metadata leaves a session out.
        assert listed == ({"healthy"} if part == "metadata" else {"damaged", "healthy"})
        assert await storage.delete_session(U, A, "damaged")  # the way out still works
        assert [i.session_id for i in await storage.list_sessions(U)] == ["healthy"]


async def test_a_damaged_row_is_left_out_of_the_listing_with_a_warning(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    async with backend.make() as storage:
        await _two_sessions(storage)
        await storage.upsert_session(U, A, "broken-times")
        await _damage(backend, storage, "damaged", "metadata")
        if backend.name == "sqlite":
            with sqlite3.connect(backend.path, isolation_level=None) as db:
                db.execute(
                    "UPDATE tether_sessions SET updated_at = 'noon' WHERE session_id = ?",
                    ("broken-times",),
                )
        else:
            assert isinstance(storage, RedisStorage)
            key = storage.keys_of(SessionKey(U, A, "broken-times"))[0]
            await backend.client.hset(key, "updated_at", "noon")
        with caplog.at_level(logging.WARNING, logger="tether.storage"):
            infos = await storage.list_sessions(U)
        assert [i.session_id for i in infos] == ["healthy"]
        warned = " ".join(r.getMessage() for r in caplog.records)
        assert "session_id='damaged'" in warned and "session_id='broken-times'" in warned


async def test_metadata_too_deep_to_load_back_is_refused_and_nothing_written(
    backend: Backend,
) -> None:
    async with backend.make() as storage:
        await storage.upsert_session(U, A, "s", metadata={"ok": True})
        before = await backend.raw()
        with pytest.raises(SessionInputError, match="deeper than"):
            await storage.upsert_session(U, A, "s", metadata={"x": nested(MAX_JSON_DEPTH + 1)})
        assert await backend.raw() == before
        await storage.upsert_session(U, A, "s", metadata={"x": nested(MAX_JSON_DEPTH - 2)})
        record = await storage.get_session(U, A, "s")
        assert record is not None and record.metadata["x"] == nested(MAX_JSON_DEPTH - 2)


def test_the_depth_scan_counts_brackets_outside_strings_only() -> None:
    assert not json_depth_exceeds(json.dumps(nested(MAX_JSON_DEPTH)))
    assert json_depth_exceeds(json.dumps(nested(MAX_JSON_DEPTH + 1)))
    assert json_depth_exceeds(DEEP) and json_depth_exceeds(DEEP.encode())
    brackets_in_text = json.dumps({"text": '["{' * 10_000, "quote": '\\"[[[' * 100})
    assert not json_depth_exceeds(brackets_in_text)
    many_but_flat = json.dumps([[i] for i in range(10_000)])
    assert not json_depth_exceeds(many_but_flat)
    assert json_depth_exceeds("[[[", limit=2) and not json_depth_exceeds("[[]]", limit=2)


def _depth_by_hand(text: str) -> int:
    """The nesting depth, one character at a time (the reference for the fast scan)."""
    depth = deepest = 0
    in_string = escaped = False
    for ch in text:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "]}":
            depth -= 1
    return deepest


_JSON = st.recursive(
    st.none() | st.integers() | st.text(alphabet='[]{}"\\ab\u00e9\ud7ff'),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(st.text(alphabet='[]{}"\\k', max_size=3), inner, max_size=3)
    ),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON, limit=st.integers(min_value=0, max_value=12))
def test_the_depth_scan_agrees_with_a_character_by_character_count(value: Any, limit: int) -> None:
    text = json.dumps(value, ensure_ascii=False)
    assert json_depth_exceeds(text, limit) is (_depth_by_hand(text) > limit)


@pytest.mark.parametrize("column", ["metadata", "updated_at", "head", "session_id"])
async def test_sqlite_text_that_is_not_utf8_is_a_damaged_row(tmp_path: Path, column: str) -> None:
    # (Redis hands out bytes, which the decoders already check.)
    path = sqlite_path(tmp_path)
    async with SQLiteStorage(path) as storage:
        await _two_sessions(storage)
        with sqlite3.connect(path, isolation_level=None) as db:
            db.execute(
                f"UPDATE tether_sessions SET {column} = CAST(X'FF7B' AS TEXT)"
                " WHERE session_id = 'damaged'"
            )
        if column != "session_id":
            with pytest.raises(SessionCorruptedError, match=r"session_id='damaged'"):
                await storage.get_session(U, A, "damaged")
        healthy = await storage.get_session(U, A, "healthy")
        assert healthy is not None
        listed = sorted(i.session_id for i in await storage.list_sessions(U))
        assert listed == (["damaged", "healthy"] if column == "head" else ["healthy"])
