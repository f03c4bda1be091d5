"""The tests every session storage must pass; subclass `StorageConformance` to run them.

```python
import pytest
from tether.testing.storage_conformance import StorageConformance

class TestMyStorage(StorageConformance):
    @pytest.fixture
    def storage_factory(self, tmp_path):
        # Each call returns a new, unopened storage over the SAME data (a second
        # "worker"); the suite opens and closes what it creates.
        return lambda: MyStorage(tmp_path / "data")
```

To run it against several backends, parametrise the fixture
(`@pytest.fixture(params=[...])`). Needs `pytest` and `pytest-asyncio`.
"""

# ruff: noqa: D102  # test methods are named for the behaviour they check

from __future__ import annotations

import asyncio
import random
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

import pytest
import pytest_asyncio

from tether.app.storage import SessionInfo, SessionInputError, SessionRecord, StorageBase
from tether.errors import (
    SessionConflictError,
    SessionNotFoundError,
    StorageUnavailableError,
)
from tether.message import UserMsg
from tether.state import AgentState
from tether.testing._states import edit_randomly, rich_state

__all__ = ["StorageConformance", "edit_randomly", "rich_state"]

U, A, S = "user-1", "agent-1", "session-1"
StorageFactory = Callable[[], StorageBase]

OpenStorage = Callable[[], Awaitable[StorageBase]]
"""The `stores` fixture: opens one more storage over the same data."""


class StorageConformance:
    """Behaviour every `StorageBase` must show; subclasses provide `storage_factory`."""

    pytestmark = pytest.mark.asyncio

    @pytest.fixture
    def storage_factory(self) -> StorageFactory:
        """Override: return a callable making new storages over one shared backing store."""
        raise NotImplementedError("define a `storage_factory` fixture in your test class")

    @pytest_asyncio.fixture
    async def stores(self, storage_factory: StorageFactory) -> AsyncIterator[OpenStorage]:
        """A function opening another storage over the same data (closed at teardown)."""
        async with AsyncExitStack() as stack:

            async def open_one() -> StorageBase:
                return await stack.enter_async_context(storage_factory())

            yield open_one

    @pytest_asyncio.fixture
    async def storage(self, stores: OpenStorage) -> StorageBase:
        """One open storage."""
        opened: StorageBase = await stores()
        return opened

    async def test_get_missing_returns_none(self, storage: StorageBase) -> None:
        assert await storage.get_session(U, A, S) is None

    async def test_upsert_creates_a_fresh_session(self, storage: StorageBase) -> None:
        record = await storage.upsert_session(U, A, S)
        assert isinstance(record, SessionRecord)
        assert (record.user_id, record.agent_id, record.session_id) == (U, A, S)
        assert record.version == 1 and record.metadata == {}
        assert record.state.context == [] and record.created_at == record.updated_at
        assert record.created_at.tzinfo is not None
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == record.state and loaded.version == 1

    async def test_upsert_keeps_an_existing_state_and_replaces_metadata(
        self, storage: StorageBase
    ) -> None:
        state = rich_state()
        await storage.upsert_session(U, A, S, state=state, metadata={"title": "first"})
        again = await storage.upsert_session(U, A, S, metadata={"title": "second"})
        assert again.state == state and again.version == 1
        assert again.metadata == {"title": "second"}
        kept = await storage.upsert_session(U, A, S)
        assert kept.metadata == {"title": "second"} and kept.state == state

    async def test_set_metadata_keeps_the_state_and_version(self, storage: StorageBase) -> None:
        state = rich_state()
        await storage.upsert_session(U, A, S, state=state, metadata={"title": "first"})
        await storage.set_session_metadata(U, A, S, {"tasks": {"t1": {"state": "done"}}})
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == state and loaded.version == 1
        assert loaded.metadata == {"tasks": {"t1": {"state": "done"}}}
        await storage.set_session_metadata(U, A, "new-session", {"made": True})
        made = await storage.get_session(U, A, "new-session")
        assert made is not None and made.metadata == {"made": True}
        assert made.state.context == [] and made.version == 1

    async def test_upsert_with_a_state_replaces_it(self, storage: StorageBase) -> None:
        await storage.upsert_session(U, A, S, state=rich_state(8))
        other = AgentState(summary="replaced")
        record = await storage.upsert_session(U, A, S, state=other)
        assert record.version == 2 and record.state is other
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == other and loaded.state.context == []

    async def test_a_rich_state_round_trips_equal_in_another_worker(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        state = rich_state(12)
        await storage.upsert_session(U, A, S, state=state, metadata={"k": [1, "二"]})
        other: StorageBase = await stores()
        loaded = await other.get_session(U, A, S)
        assert loaded is not None
        assert loaded.state == state and loaded.state is not state
        assert loaded.metadata == {"k": [1, "二"]}
        assert loaded.state.reply_msg() is not None

    async def test_records_do_not_share_state_objects(self, storage: StorageBase) -> None:
        await storage.upsert_session(U, A, S, state=rich_state())
        first, second = await storage.get_session(U, A, S), await storage.get_session(U, A, S)
        assert first is not None and second is not None
        first.state.add_message(UserMsg("user", "only in first"))
        assert first.state != second.state

    async def test_update_of_a_missing_session_raises_key_error(self, storage: StorageBase) -> None:
        with pytest.raises(SessionNotFoundError, match="upsert_session") as info:
            await storage.update_session_state(U, A, S, AgentState())
        assert isinstance(info.value, KeyError)
        assert await storage.get_session(U, A, S) is None

    async def test_updates_bump_the_version_and_round_trip(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        record = await storage.upsert_session(U, A, S)
        state = record.state
        for i in range(3):
            state.add_message(UserMsg("user", f"message {i}"))
            assert await storage.update_session_state(U, A, S, state) == i + 2
        loaded = await (await stores()).get_session(U, A, S)
        assert loaded is not None and loaded.version == 4 and loaded.state == state

    async def test_random_edits_round_trip_after_every_save(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        rng = random.Random(7)
        reader: StorageBase = await stores()
        state = (await storage.upsert_session(U, A, S, state=rich_state(5))).state
        for step in range(60):
            kind = edit_randomly(state, rng)
            await storage.update_session_state(U, A, S, state)
            loaded = await reader.get_session(U, A, S)
            assert loaded is not None, kind
            assert loaded.version == step + 2, kind
            assert loaded.state == state, f"step {step}: {kind}"

    async def test_a_reloaded_state_continues_from_any_worker(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        rng = random.Random(11)
        workers = [storage, await stores()]
        await storage.upsert_session(U, A, S, state=rich_state(3))
        for step in range(20):
            worker = workers[step % 2]
            record = await worker.get_session(U, A, S)
            assert record is not None
            edit_randomly(record.state, rng)
            await worker.update_session_state(U, A, S, record.state)
            check = await workers[(step + 1) % 2].get_session(U, A, S)
            assert check is not None and check.state == record.state

    async def test_concurrent_updates_from_one_version_exactly_one_wins(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        await storage.upsert_session(U, A, S, state=rich_state())
        other: StorageBase = await stores()
        first, second = await storage.get_session(U, A, S), await other.get_session(U, A, S)
        assert first is not None and second is not None
        first.state.add_message(UserMsg("user", "from worker 1"))
        second.state.add_message(UserMsg("user", "from worker 2"))
        results = await asyncio.gather(
            storage.update_session_state(U, A, S, first.state),
            other.update_session_state(U, A, S, second.state),
            return_exceptions=True,
        )
        wins = [r for r in results if isinstance(r, int)]
        assert wins == [2], results
        assert sum(isinstance(r, SessionConflictError) for r in results) == 1, results
        winner = first.state if isinstance(results[0], int) else second.state
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 2 and loaded.state == winner

    async def test_the_loser_reloads_and_nothing_is_lost(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        await storage.upsert_session(U, A, S)
        workers = [storage, await stores(), await stores()]

        async def add(worker: StorageBase, text: str) -> int:
            while True:
                record = await worker.get_session(U, A, S)
                assert record is not None
                record.state.add_message(UserMsg("user", text))
                try:
                    return await worker.update_session_state(U, A, S, record.state)
                except SessionConflictError:
                    continue

        texts = [f"note {i}" for i in range(12)]
        await asyncio.gather(*(add(workers[i % 3], t) for i, t in enumerate(texts)))
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 13
        assert sorted(m.get_text_content() or "" for m in loaded.state.context) == sorted(texts)

    async def test_a_stale_expected_version_conflicts_and_changes_nothing(
        self, storage: StorageBase
    ) -> None:
        state = (await storage.upsert_session(U, A, S, state=rich_state())).state
        state.add_message(UserMsg("user", "v2"))
        await storage.update_session_state(U, A, S, state)
        before = await storage.get_session(U, A, S)
        assert before is not None
        changed = AgentState(summary="stale")
        with pytest.raises(SessionConflictError, match="version 2"):
            await storage.update_session_state(U, A, S, changed, expected_version=1)
        after = await storage.get_session(U, A, S)
        assert after is not None and after.version == 2 and after.state == before.state

    async def test_expected_version_works_for_a_state_it_never_saw(
        self, storage: StorageBase
    ) -> None:
        await storage.upsert_session(U, A, S, state=rich_state())
        fresh = AgentState(summary="built elsewhere")
        assert await storage.update_session_state(U, A, S, fresh, expected_version=1) == 2
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == fresh

    async def test_a_state_it_never_saw_is_written_last_writer_wins(
        self, storage: StorageBase
    ) -> None:
        await storage.upsert_session(U, A, S, state=rich_state())
        first = await storage.get_session(U, A, S)
        assert first is not None
        first.state.add_message(UserMsg("user", "tracked"))
        await storage.update_session_state(U, A, S, first.state)
        untracked = AgentState.model_validate(first.state.model_dump())
        untracked.add_message(UserMsg("user", "untracked"))
        assert await storage.update_session_state(U, A, S, untracked) == 3
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state == untracked

    async def test_saving_advances_the_remembered_version(self, storage: StorageBase) -> None:
        record = await storage.upsert_session(U, A, S)
        stale = await storage.get_session(U, A, S)
        assert stale is not None
        for i in range(3):
            record.state.add_message(UserMsg("user", str(i)))
            await storage.update_session_state(U, A, S, record.state)
        stale.state.add_message(UserMsg("user", "late"))
        with pytest.raises(SessionConflictError):
            await storage.update_session_state(U, A, S, stale.state)

    async def test_an_old_state_conflicts_with_a_recreated_session(
        self, storage: StorageBase
    ) -> None:
        old = (await storage.upsert_session(U, A, S, state=rich_state())).state
        old.add_message(UserMsg("user", "v2"))
        await storage.update_session_state(U, A, S, old)
        assert await storage.delete_session(U, A, S)
        await storage.upsert_session(U, A, S)
        with pytest.raises(SessionConflictError):
            await storage.update_session_state(U, A, S, old)
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.state.context == []

    async def test_a_session_deleted_and_created_again_is_not_the_old_one(
        self, storage: StorageBase, stores: OpenStorage
    ) -> None:
        other: StorageBase = await stores()
        old = (await storage.upsert_session(U, A, S, state=rich_state())).state
        old.add_message(UserMsg("user", "old, version 2"))
        assert await storage.update_session_state(U, A, S, old) == 2
        assert await other.delete_session(U, A, S)
        new = (await other.upsert_session(U, A, S, state=AgentState(summary="new"))).state
        for i in range(4):
            new.add_message(UserMsg("user", f"new {i}"))
        assert await other.update_session_state(U, A, S, new) == 2  # the same number again
        old.add_message(UserMsg("user", "old, version 3"))
        with pytest.raises(SessionConflictError, match="created again"):
            await storage.update_session_state(U, A, S, old)
        loaded = await other.get_session(U, A, S)
        assert loaded is not None and loaded.version == 2 and loaded.state == new

    async def test_a_state_that_would_not_load_back_is_refused(self, storage: StorageBase) -> None:
        record = await storage.upsert_session(U, A, S, state=rich_state())
        record.state.plugins["git"] = "three"  # type: ignore[assignment]  # not validated
        with pytest.raises(SessionInputError, match="nothing was written"):
            await storage.update_session_state(U, A, S, record.state)
        with pytest.raises(SessionInputError, match="nothing was written"):
            await storage.upsert_session(U, A, "new", state=record.state)
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 1 and loaded.state.plugins["git"] == 2
        assert await storage.get_session(U, A, "new") is None

    async def test_a_closed_storage_refuses_calls_until_reopened(
        self, storage_factory: StorageFactory
    ) -> None:
        storage = storage_factory()
        async with storage:
            state = (await storage.upsert_session(U, A, S)).state
        state.add_message(UserMsg("user", "after close"))
        with pytest.raises(StorageUnavailableError, match="closed"):
            await storage.update_session_state(U, A, S, state)
        with pytest.raises(StorageUnavailableError, match="closed"):
            await storage.get_session(U, A, S)
        async with storage:
            assert await storage.update_session_state(U, A, S, state) == 2

    async def test_many_sessions_at_once_on_one_storage(self, storage: StorageBase) -> None:
        async def converse(i: int) -> None:
            state = (await storage.upsert_session(U, A, f"s{i}")).state
            for turn in range(2):
                state.add_message(UserMsg("user", f"{i}: {turn}"))
                await storage.update_session_state(U, A, f"s{i}", state)

        await asyncio.gather(*(converse(i) for i in range(200)))
        infos = await storage.list_sessions(U, agent_id=A)
        assert len(infos) == 200 and {(i.version, i.message_count) for i in infos} == {(3, 2)}

    async def test_a_state_saved_under_another_session_is_not_tied_to_the_first(
        self, storage: StorageBase
    ) -> None:
        state = (await storage.upsert_session(U, A, S, state=rich_state())).state
        await storage.upsert_session(U, A, "session-2", state=AgentState(summary="b"))
        await storage.upsert_session(U, A, "session-2", metadata={"touched": True})
        assert await storage.update_session_state(U, A, "session-2", state) == 2
        loaded = await storage.get_session(U, A, "session-2")
        assert loaded is not None and loaded.state == state

    async def test_list_sessions_filters_by_user_and_agent(self, storage: StorageBase) -> None:
        await storage.upsert_session(U, "agent-1", "s1", metadata={"n": 1})
        await storage.upsert_session(U, "agent-2", "s2")
        await storage.upsert_session("someone-else", "agent-1", "s3")
        state = (await storage.upsert_session(U, "agent-1", "s4")).state
        state.add_message(UserMsg("user", "hi"))
        await storage.update_session_state(U, "agent-1", "s4", state)
        infos = await storage.list_sessions(U)
        assert all(isinstance(i, SessionInfo) for i in infos)
        assert [i.session_id for i in infos][0] == "s4"  # most recently updated first
        assert sorted(i.session_id for i in infos) == ["s1", "s2", "s4"]
        only = await storage.list_sessions(U, agent_id="agent-1")
        assert sorted(i.session_id for i in only) == ["s1", "s4"]
        s4 = next(i for i in only if i.session_id == "s4")
        assert (s4.version, s4.message_count) == (2, 1)
        assert next(i for i in only if i.session_id == "s1").metadata == {"n": 1}
        assert await storage.list_sessions("nobody") == []

    async def test_delete_session(self, storage: StorageBase) -> None:
        await storage.upsert_session(U, A, S, state=rich_state())
        await storage.upsert_session(U, A, "keep")
        assert await storage.delete_session(U, A, S) is True
        assert await storage.delete_session(U, A, S) is False
        assert await storage.get_session(U, A, S) is None
        with pytest.raises(SessionNotFoundError):
            await storage.update_session_state(U, A, S, AgentState())
        assert [i.session_id for i in await storage.list_sessions(U)] == ["keep"]

    async def test_ids_with_separators_never_collide(self, storage: StorageBase) -> None:
        keys = [
            ("a:b", "c", "d"),
            ("a", "b:c", "d"),
            ("a", "b", "c:d"),
            ("a", "b", "c%3Ad"),
            ("{a}", "b", "c"),
            ("ü/ß", "*", "?"),
        ]
        for n, key in enumerate(keys):
            await storage.upsert_session(*key, state=AgentState(summary=str(n)))
        for n, key in enumerate(keys):
            loaded = await storage.get_session(*key)
            assert loaded is not None and loaded.state.summary == str(n), key
        listed = await storage.list_sessions("a", agent_id="b")
        assert sorted(i.session_id for i in listed) == ["c%3Ad", "c:d"]

    @pytest.mark.parametrize("ids", [("", A, S), (U, "", S), (U, A, ""), (None, A, S), (U, 3, S)])
    async def test_bad_ids_raise_and_write_nothing(
        self, storage: StorageBase, ids: tuple[Any, Any, Any]
    ) -> None:
        with pytest.raises(SessionInputError, match="non-empty string"):
            await storage.upsert_session(*ids)
        with pytest.raises(SessionInputError):
            await storage.update_session_state(*ids, state=AgentState())
        with pytest.raises(SessionInputError):
            await storage.get_session(*ids)
        with pytest.raises(SessionInputError):
            await storage.delete_session(*ids)
        assert await storage.list_sessions(U) == []

    @pytest.mark.parametrize("ids", [("", None), (None, None), (U, ""), (U, 7)])
    async def test_list_sessions_refuses_bad_ids(
        self, storage: StorageBase, ids: tuple[Any, Any]
    ) -> None:
        with pytest.raises(SessionInputError, match="non-empty string"):
            await storage.list_sessions(*ids)

    async def test_a_state_that_is_not_an_agent_state_is_refused(
        self, storage: StorageBase
    ) -> None:
        record = await storage.upsert_session(U, A, S, state=rich_state())
        with pytest.raises(SessionInputError, match="AgentState"):
            await storage.update_session_state(U, A, S, record.state.model_dump())  # type: ignore[arg-type]
        with pytest.raises(SessionInputError, match="AgentState"):
            await storage.upsert_session(U, A, S, state={"context": []})  # type: ignore[arg-type]
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 1 and loaded.state == record.state

    @pytest.mark.parametrize("metadata", [["not", "a", "dict"], {"x": object()}, {1: "int key"}])
    async def test_bad_metadata_is_refused(self, storage: StorageBase, metadata: Any) -> None:
        with pytest.raises(SessionInputError, match="metadata"):
            await storage.upsert_session(U, A, S, metadata=metadata)
        assert await storage.get_session(U, A, S) is None

    @pytest.mark.parametrize("version", [0, -1, "1", True, 1.0])
    async def test_a_bad_expected_version_is_refused(
        self, storage: StorageBase, version: Any
    ) -> None:
        record = await storage.upsert_session(U, A, S)
        record.state.add_message(UserMsg("user", "x"))
        with pytest.raises(SessionInputError, match="expected_version"):
            await storage.update_session_state(U, A, S, record.state, expected_version=version)
        loaded = await storage.get_session(U, A, S)
        assert loaded is not None and loaded.version == 1 and loaded.state.context == []
