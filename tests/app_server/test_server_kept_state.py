"""A worker keeps a session's state between replies, but never serves a stale one."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from svc_agents import make_agent
from svc_helpers import ThreadServer, new_session, user

from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage, StorageBase
from tether.message import UserMsg

KEYS = {"key-alice-0123456789": "alice"}
AUTH = {"authorization": "Bearer key-alice-0123456789"}


class CountingStorage(SQLiteStorage):
    """Counts the full loads (`get_session`) the service makes."""

    loads = 0

    async def get_session(self, user_id: str, agent_id: str, session_id: str) -> Any:
        CountingStorage.loads += 1
        return await super().get_session(user_id, agent_id, session_id)


def _texts(storage_path: Any, sid: str) -> list[str]:
    async def read() -> list[str]:
        async with SQLiteStorage(storage_path) as other:
            record = await other.get_session("alice", "planner", sid)
            assert record is not None
            return [m.get_text_content() or "" for m in record.state.context]

    return asyncio.run(read())


def _write_behind_its_back(storage: StorageBase, sid: str, text: str) -> None:
    async def write() -> None:
        async with storage:
            record = await storage.get_session("alice", "planner", sid)
            assert record is not None
            record.state.add_message(UserMsg("user", text))
            await storage.update_session_state("alice", "planner", sid, record.state)

    asyncio.run(write())


@pytest.fixture
def server(tmp_path: Any, test_dir: Any) -> Any:
    db = tmp_path / "sessions.db"
    CountingStorage.loads = 0
    storage = CountingStorage(db)
    app = create_app(
        {"planner": make_agent()}, storage, events=SQLiteEventLog(tmp_path / "events.db"),
        api_keys=KEYS,
    )  # fmt: skip
    with ThreadServer(app) as running:
        yield running.url, db


def test_the_next_reply_reuses_the_kept_state(server: Any) -> None:
    import httpx

    url, db = server
    with httpx.Client(base_url=url, headers=AUTH, timeout=30) as c:
        sid = new_session(c)
        assert c.post(f"/v1/sessions/{sid}/replies", json=user("one")).status_code == 200
        loads = CountingStorage.loads
        assert c.post(f"/v1/sessions/{sid}/replies", json=user("two")).status_code == 200
        assert CountingStorage.loads == loads  # no full load: the kept state was current
    assert _texts(db, sid) == ["one", "echo: one ", "two", "echo: two "]


def test_a_state_written_elsewhere_is_loaded_not_the_kept_one(server: Any) -> None:
    import httpx

    url, db = server
    with httpx.Client(base_url=url, headers=AUTH, timeout=30) as c:
        sid = new_session(c)
        assert c.post(f"/v1/sessions/{sid}/replies", json=user("one")).status_code == 200
        _write_behind_its_back(SQLiteStorage(db), sid, "written by another worker")
        loads = CountingStorage.loads
        assert c.post(f"/v1/sessions/{sid}/replies", json=user("two")).status_code == 200
        assert CountingStorage.loads == loads + 1  # the kept state was stale: loaded again
        # The permission mode changed through another state object: loaded again too.
        assert c.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"}).status_code == 200
        assert c.post(f"/v1/sessions/{sid}/replies", json=user("three")).status_code == 200
        assert c.get(f"/v1/sessions/{sid}").json()["permission_mode"] == "bypass"
    texts = _texts(db, sid)
    assert texts[:3] == ["one", "echo: one ", "written by another worker"]
    assert texts[3:] == ["two", "echo: two ", "three", "echo: three "]
