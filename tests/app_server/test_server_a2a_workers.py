"""A2A tasks across workers and restarts: two `tether serve` apps on one storage."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import pytest
from a2a.helpers.proto_helpers import get_message_text
from a2a.types.a2a_pb2 import CancelTaskRequest, GetTaskRequest, ListTasksRequest
from a2a_helpers import a2a_client, message, send, state
from svc_agents import make_agent
from svc_helpers import ThreadServer

from tether.app.server import create_app

if TYPE_CHECKING:
    from conftest import Backend

KEYS = {"key-alice-0123456789": "alice", "key-bob-9876543210": "bob"}
ALICE_HEADERS = {"authorization": "Bearer key-alice-0123456789"}
NOTE = [[["save_note", {"name": "a", "text": "x"}]], "saved it"]


def worker(backend: Backend) -> ThreadServer:
    storage, events = backend.pair()
    app = create_app(
        {"planner": make_agent()}, storage, events=events, api_keys=KEYS, lease_ttl=2.0
    )
    return ThreadServer(app)


@pytest.fixture
def workers(backend: Backend, test_dir: Path) -> Iterator[list[str]]:
    with ExitStack() as stack:
        yield [stack.enter_context(worker(backend)).url for _ in range(2)]


def runs(test_dir: Path) -> list[str]:
    path = test_dir / "runs.log"
    return path.read_text().splitlines() if path.exists() else []


async def test_input_required_answered_on_another_worker(
    workers: list[str], test_dir: Path
) -> None:
    first, second = workers
    async with a2a_client(first) as one:
        task, _ = await send(one, message(json.dumps(NOTE), context_id="w1"))
    assert state(task) == "input_required"
    async with a2a_client(second, binding="HTTP+JSON") as two:
        done, _ = await send(two, message("yes", task_id=task.id))
    assert state(done) == "completed" and done.id == task.id
    assert get_message_text(done.status.message).strip() == "saved it"
    assert runs(test_dir) == ["save_note a"]
    async with a2a_client(first) as one:
        stored = await one.get_task(GetTaskRequest(id=task.id))
    assert state(stored) == "completed", "the first worker reads the task the second ended"
    roles = [m.role for m in stored.history]
    assert len(roles) >= 2, "the task's history holds the question and the answer"


async def test_cancel_on_another_worker(workers: list[str], test_dir: Path) -> None:
    first, second = workers
    plan = [[["gate", {"name": "never"}]], "unreachable"]
    async with a2a_client(first, streaming=False) as one:
        request = message(json.dumps(plan), context_id="w2")
        request.configuration.return_immediately = True
        task, _ = await send(one, request)
        while "gate never start" not in runs(test_dir):
            await asyncio.sleep(0.02)
        async with a2a_client(second) as two:
            canceled = await two.cancel_task(CancelTaskRequest(id=task.id))
        assert state(canceled) == "canceled"
        async with httpx.AsyncClient(base_url=first, headers=ALICE_HEADERS) as http:
            while (await http.get("/v1/sessions/w2")).json()["status"] != "idle":
                await asyncio.sleep(0.02)
        again, _ = await send(one, message("after", context_id="w2"))
        stored = await one.get_task(GetTaskRequest(id=task.id))
    assert state(again) == "completed"
    assert state(stored) == "canceled", "the interrupted run does not overwrite the cancel"


def test_tasks_survive_a_restart(backend: Backend, test_dir: Path) -> None:
    async def create(url: str) -> str:
        async with a2a_client(url) as client:
            task, _ = await send(client, message(json.dumps(NOTE), context_id="r1"))
            return task.id

    async def finish(url: str, task_id: str) -> tuple[str, int]:
        async with a2a_client(url) as client:
            before = await client.get_task(GetTaskRequest(id=task_id))
            assert state(before) == "input_required"
            done, _ = await send(client, message("no", task_id=task_id))
            page = await client.list_tasks(ListTasksRequest())
            return state(done), len(page.tasks)

    with worker(backend) as server:
        task_id = asyncio.run(create(server.url))
    with worker(backend) as server:  # a new process's worth of objects on the same data
        assert asyncio.run(finish(server.url, task_id)) == ("completed", 1)
    assert runs(test_dir) == []
