"""Concurrency on real backends: cancellation, close, other processes, many sessions at once."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import subprocess
import sys
import textwrap
import threading
from collections.abc import Awaitable
from pathlib import Path
from typing import Any, TypeVar

import pytest
import redis.asyncio as aioredis
from redis.asyncio.connection import AbstractConnection
from storage_helpers import REDIS_DB, REDIS_HOST, REDIS_PORT, Backend, sqlite_path

from tether.app.storage import RedisStorage, SessionDelta, SessionKey, SQLiteStorage, StorageBase
from tether.errors import SessionConflictError
from tether.message import AssistantMsg, UserMsg
from tether.state import AgentState
from tether.testing.storage_conformance import rich_state

U, A, S = "u", "a", "s"
T = TypeVar("T")
SRC = Path(__file__).resolve().parents[2] / "src"


def snapshot(state: AgentState) -> AgentState:
    return AgentState.model_validate(state.model_dump(mode="json"))


def _nobody_holds_the_write_lock(path: str) -> None:
    db = sqlite3.connect(path, isolation_level=None, timeout=1.0)
    try:
        db.execute("BEGIN IMMEDIATE")
        db.execute("ROLLBACK")
    finally:
        db.close()


@pytest.mark.parametrize("double", [False, True], ids=["cancel", "cancel-twice"])
@pytest.mark.parametrize("when", ["waiting-for-the-lock", "queued"])
@pytest.mark.parametrize("op", ["update", "upsert", "delete"])
async def test_sqlite_cancelled_write_is_old_or_new(
    tmp_path: Path, op: str, when: str, double: bool
) -> None:
    """Cancel a write that waits on the storage's thread for another process's lock.

    A write runs on the event loop unless the file is locked; then its whole transaction
    runs on the thread, and a cancelled caller leaves it to commit or roll back there,
    before the next call starts.
    """
    path = sqlite_path(tmp_path)
    async with SQLiteStorage(path, busy_timeout=30) as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
        old = snapshot(state)
        state.add_message(UserMsg("user", "new"))
        state.summary = "new summary"
        new = snapshot(state)
        pool = storage._file._pool
        assert pool is not None
        gate = threading.Event()
        if when == "queued":  # the thread is busy: the write waits in its queue
            pool.submit(gate.wait, 10)
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")  # another process holds the write lock
        if op == "update":
            write: Awaitable[Any] = storage.update_session_state(U, A, S, state)
        elif op == "upsert":
            write = storage.upsert_session(U, A, S, state=state)
        else:
            write = storage.delete_session(U, A, S)
        task = asyncio.ensure_future(write)
        for _ in range(3):
            await asyncio.sleep(0)  # the write tried here, found the lock, went to the thread
        assert not task.done()
        task.cancel()
        if double:
            await asyncio.sleep(0)
            task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        other.execute("ROLLBACK")
        other.close()
        gate.set()
        await asyncio.wrap_future(pool.submit(lambda: None))  # the thread is done with it
        _nobody_holds_the_write_lock(path)
        async with SQLiteStorage(path) as reader:
            record = await reader.get_session(U, A, S)
        if op == "delete":
            assert record is None or record.state == old
        else:
            assert record is not None and record.state in (old, new)
        assert await storage.get_session(U, A, S) == record  # still usable
        await storage.upsert_session(U, A, "after")


async def test_sqlite_write_waits_for_another_process_lock(tmp_path: Path) -> None:
    """A write that finds the file locked waits for it (on the thread), then lands."""
    path = sqlite_path(tmp_path)
    async with SQLiteStorage(path, busy_timeout=30) as storage:
        state = (await storage.upsert_session(U, A, S)).state
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        state.add_message(UserMsg("user", "after the lock"))
        task = asyncio.ensure_future(storage.update_session_state(U, A, S, state))
        for _ in range(3):
            await asyncio.sleep(0)
        assert not task.done()  # waiting, and the loop is free meanwhile
        other.execute("ROLLBACK")
        other.close()
        assert await task == 2
        record = await storage.get_session(U, A, S)
        assert record is not None and record.state == state


@pytest.mark.parametrize("when", ["before-sending", "after-the-reply"])
async def test_redis_cancelled_mid_save_is_old_or_new(
    redis_prefix: str, monkeypatch: pytest.MonkeyPatch, when: str
) -> None:
    async with RedisStorage(
        host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix
    ) as storage:
        state = (await storage.upsert_session(U, A, S, state=rich_state(3))).state
        state.add_message(UserMsg("user", "warm-up"))  # the server now knows the script
        await storage.update_session_state(U, A, S, state)
        old = snapshot(state)
        state.add_message(UserMsg("user", "new"))
        new = snapshot(state)
        name = "send_packed_command" if when == "before-sending" else "read_response"
        original = getattr(AbstractConnection, name)
        armed = [True]

        async def cancelling(self: Any, *args: Any, **kwargs: Any) -> Any:
            if when == "after-the-reply":
                result = await original(self, *args, **kwargs)
            if armed[0]:
                armed[0] = False
                task = asyncio.current_task()
                assert task is not None
                task.cancel()
                await asyncio.sleep(0)  # the cancellation is delivered here
            if when == "before-sending":
                result = await original(self, *args, **kwargs)
            return result

        monkeypatch.setattr(AbstractConnection, name, cancelling)
        with pytest.raises(asyncio.CancelledError):
            await storage.update_session_state(U, A, S, state)
        monkeypatch.setattr(AbstractConnection, name, original)
        record = await storage.get_session(U, A, S)
        assert record is not None
        if when == "before-sending":
            assert record.state == old and record.version == 2
            assert await storage.update_session_state(U, A, S, state) == 3
        else:  # the write landed but the caller never heard: its next save must not guess
            assert record.state == new and record.version == 3
            with pytest.raises(SessionConflictError):
                await storage.update_session_state(U, A, S, state)


async def test_close_waits_for_a_write_in_flight(backend: Backend) -> None:
    storage = backend.make()
    await storage.open()
    state = (await storage.upsert_session(U, A, S, state=rich_state(50))).state
    state.add_message(UserMsg("user", "in flight"))
    entered = asyncio.Event()
    original = storage._apply

    async def apply(key: SessionKey, delta: SessionDelta) -> int:
        entered.set()
        return await original(key, delta)

    storage._apply = apply  # type: ignore[method-assign]
    write = asyncio.ensure_future(storage.update_session_state(U, A, S, state))
    await entered.wait()
    await storage.close()
    assert write.done() and await write == 2
    async with backend.make() as other:
        record = await other.get_session(U, A, S)
    assert record is not None and record.version == 2 and record.state == state


async def test_many_sessions_at_once_on_one_storage(backend: Backend) -> None:
    sessions = 400

    async def converse(storage: StorageBase, i: int) -> None:
        state = (await storage.upsert_session(U, A, f"s{i}")).state
        for turn in range(3):
            state.add_message(UserMsg("user", f"{i}: question {turn}"))
            state.add_message(AssistantMsg("agent", f"{i}: answer {turn}"))
            await storage.update_session_state(U, A, f"s{i}", state)

    async with backend.make() as storage:
        await asyncio.gather(*(converse(storage, i) for i in range(sessions)))
        infos = await storage.list_sessions(U)
        assert len(infos) == sessions
        assert {(i.version, i.message_count) for i in infos} == {(4, 6)}
        record = await storage.get_session(U, A, "s123")
        assert record is not None
        assert record.state.context[-1].get_text_content() == "123: answer 2"


async def test_redis_connections_stay_within_max_connections(redis_prefix: str) -> None:
    client = aioredis.Redis(host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB)
    peak = 0
    async with RedisStorage(
        host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix, max_connections=8
    ) as storage:

        async def one(i: int) -> None:
            state = (await storage.upsert_session(U, A, f"s{i}")).state
            state.add_message(UserMsg("user", str(i)))
            await storage.update_session_state(U, A, f"s{i}", state)

        await asyncio.gather(*(one(i) for i in range(200)))
        pool = storage._client.connection_pool
        peak = len(pool._available_connections) + len(pool._in_use_connections)  # type: ignore[attr-defined]
    assert 1 <= peak <= 8
    await client.aclose()


async def test_a_retried_save_writes_one_consistent_snapshot(backend: Backend) -> None:
    """The state changes while a save waits: what is stored is one moment, not a mix."""
    async with backend.make() as storage, backend.make() as other:
        await storage.upsert_session(U, A, S, state=rich_state(3))
        state = AgentState(summary="first moment")  # never seen: last writer wins, with retry
        state.add_message(UserMsg("user", "first moment"))
        first = snapshot(state)
        original = storage._apply
        calls = 0

        async def apply(key: SessionKey, delta: SessionDelta) -> int:
            nonlocal calls
            calls += 1
            if calls == 1:  # another worker saves first; meanwhile the state moves on
                await other.upsert_session(U, A, S, state=AgentState(summary="other"))
                state.summary = "second moment"
                state.add_message(UserMsg("user", "second moment"))
            return await original(key, delta)

        storage._apply = apply  # type: ignore[method-assign]
        await storage.update_session_state(U, A, S, state)
        assert calls == 2
        record = await other.get_session(U, A, S)
        assert record is not None and record.state in (first, snapshot(state))


async def test_redis_list_never_drops_a_session_created_meanwhile(redis_prefix: str) -> None:
    async with (
        RedisStorage(
            host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix
        ) as storage,
        RedisStorage(
            host=REDIS_HOST, port=REDIS_PORT, db=REDIS_DB, key_prefix=redis_prefix
        ) as other,
    ):
        await storage.upsert_session(U, A, S)
        await storage.upsert_session(U, A, "kept")
        await storage.delete_session(U, A, S)
        await other.upsert_session(U, A, "ghost")
        head, msgs, _ = other.keys_of(SessionKey(U, A, "ghost"))
        await other._client.delete(head, msgs)  # expired: its index entry is stale
        original = storage._call
        recreated = False

        async def call(key: SessionKey | None, fn: Any) -> Any:
            nonlocal recreated
            result = await original(key, fn)
            if getattr(fn, "__name__", "") == "heads" and not recreated:
                recreated = True  # after the list read the heads, before it prunes
                await other.upsert_session(U, A, "ghost", metadata={"back": True})
            return result

        storage._call = call  # type: ignore[method-assign]
        listed = await storage.list_sessions(U)
        assert recreated and sorted(i.session_id for i in listed) == ["kept"]
        storage._call = original  # type: ignore[method-assign]
        again = await storage.list_sessions(U)
        assert sorted(i.session_id for i in again) == ["ghost", "kept"]


CHILD = textwrap.dedent(
    """
    import asyncio, sys
    from tether.app.storage import SQLiteStorage
    from tether.errors import SessionConflictError
    from tether.message import UserMsg

    mode, path, name = sys.argv[1:4]

    async def main():
        async with SQLiteStorage(path) as storage:
            record = await storage.get_session("u", "a", "s")
            print("ready", flush=True)
            sys.stdin.readline()
            if mode == "race":
                record.state.add_message(UserMsg("user", name))
                try:
                    print("won", await storage.update_session_state("u", "a", "s", record.state))
                except SessionConflictError:
                    print("conflict")
                return
            for i in range(25):
                while True:
                    record = await storage.get_session("u", "a", "s")
                    record.state.add_message(UserMsg("user", f"{name} {i}"))
                    try:
                        await storage.update_session_state("u", "a", "s", record.state)
                        break
                    except SessionConflictError:
                        continue
            print("done")

    asyncio.run(main())
    """
)


def _start_together(mode: str, path: str, names: list[str]) -> list[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SRC), *sys.path])}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CHILD, mode, path, name],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        for name in names
    ]
    for proc in procs:  # both have loaded the session before either writes
        assert proc.stdout is not None and proc.stdout.readline() == "ready\n"
    for proc in procs:
        assert proc.stdin is not None
        proc.stdin.write("go\n")
        proc.stdin.flush()
    outs = [proc.communicate(timeout=60)[0].strip() for proc in procs]
    assert all(proc.returncode == 0 for proc in procs), outs
    return outs


async def test_two_processes_racing_from_one_version_one_wins(tmp_path: Path) -> None:
    path = sqlite_path(tmp_path)
    async with SQLiteStorage(path) as storage:
        await storage.upsert_session(U, A, S, state=rich_state(3))
    outs = _start_together("race", path, ["first", "second"])
    assert sorted(outs) == ["conflict", "won 2"]
    winner = ["first", "second"][outs.index("won 2")]
    async with SQLiteStorage(path) as storage:
        record = await storage.get_session(U, A, S)
    assert record is not None and record.version == 2
    assert record.state.context[-1].get_text_content() == winner


async def test_two_processes_appending_lose_nothing(tmp_path: Path) -> None:
    path = sqlite_path(tmp_path)
    async with SQLiteStorage(path) as storage:
        await storage.upsert_session(U, A, S)
    assert _start_together("append", path, ["p1", "p2"]) == ["done", "done"]
    async with SQLiteStorage(path) as storage:
        record = await storage.get_session(U, A, S)
    assert record is not None and record.version == 51
    texts = [m.get_text_content() for m in record.state.context]
    assert sorted(texts) == sorted(f"{p} {i}" for p in ("p1", "p2") for i in range(25))
    for p in ("p1", "p2"):  # each process's own notes stay in order
        assert [t for t in texts if t and t.startswith(p)] == [f"{p} {i}" for i in range(25)]
