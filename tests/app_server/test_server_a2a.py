"""A2A over `tether serve`, driven by `a2a-sdk`'s own client (JSON-RPC and HTTP+JSON)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
from a2a.helpers.proto_helpers import get_artifact_text, get_data_parts, get_message_text
from a2a.types.a2a_pb2 import (
    CancelTaskRequest,
    GetTaskRequest,
    ListTasksRequest,
    SubscribeToTaskRequest,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError
from a2a_helpers import BOB, a2a_client, message, send, state

from tether.app.server import _a2a_store

if TYPE_CHECKING:
    from conftest import Live

BINDINGS = ["JSONRPC", "HTTP+JSON"]
NOTE = [[["save_note", {"name": "a", "text": "x"}]], "saved it"]


@pytest.mark.parametrize("binding", BINDINGS)
async def test_send_stream_get_list(live: Live, binding: str) -> None:
    async with a2a_client(live.url, binding=binding) as client:
        task, responses = await send(client, message("hello there", context_id="c1"))
        assert state(task) == "completed"
        assert get_message_text(task.status.message).strip() == "echo: hello there"
        kinds = [r.WhichOneof("payload") for r in responses]
        assert kinds[0] == "task", "the stream starts with the submitted task"
        assert "artifact_update" in kinds and kinds[-1] == "status_update"
        stored = await client.get_task(GetTaskRequest(id=task.id))
        assert state(stored) == "completed" and stored.context_id == "c1"
        text = "".join(get_artifact_text(a, "") for a in stored.artifacts)
        assert text.strip() == "echo: hello there", "the streamed chunks add up to the answer"
        second, _ = await send(client, message("again", context_id="c1"))
        page = await client.list_tasks(ListTasksRequest(context_id="c1"))
    assert {t.id for t in page.tasks} == {task.id, second.id}
    with live.client() as http:
        messages = http.get("/v1/sessions/c1/messages").json()["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]


async def test_send_without_streaming(live: Live) -> None:
    async with a2a_client(live.url, streaming=False) as client:
        task, responses = await send(client, message("quiet"))
    assert len(responses) == 1 and state(task) == "completed"
    assert task.context_id, "a new context gets an id"


@pytest.mark.parametrize(("answer", "ran"), [("yes", ["save_note a"]), ("no", [])])
async def test_input_required_answered_with_text(live: Live, answer: str, ran: list[str]) -> None:
    async with a2a_client(live.url) as client:
        task, _ = await send(client, message(json.dumps(NOTE), context_id=f"n-{answer}"))
        assert state(task) == "input_required"
        question = get_message_text(task.status.message)
        assert question.startswith("Allow the call to save_note with")
        (calls,) = get_data_parts(task.status.message.parts)
        assert calls["toolCalls"][0]["name"] == "save_note"
        assert live.runs() == []
        done, _ = await send(client, message(answer, task_id=task.id))
    assert state(done) == "completed" and done.id == task.id
    assert live.runs() == ran


async def test_input_required_answered_with_data(live: Live) -> None:
    async with a2a_client(live.url, binding="HTTP+JSON") as client:
        task, _ = await send(client, message(json.dumps(NOTE), context_id="n-data"))
        done, _ = await send(client, message(data={"approved": True}, task_id=task.id))
    assert state(done) == "completed"
    assert get_message_text(done.status.message).strip() == "saved it"
    assert live.runs() == ["save_note a"]


async def test_external_tool_results(live: Live) -> None:
    plan = [[["lookup", {"query": "tide"}]], "high tide at noon"]
    async with a2a_client(live.url) as client:
        task, _ = await send(client, message(json.dumps(plan), context_id="ext"))
        assert state(task) == "input_required"
        (listed,) = get_data_parts(task.status.message.parts)
        (call,) = listed["toolCalls"]
        assert (call["name"], call["arguments"]) == ("lookup", {"query": "tide"})
        with pytest.raises(InvalidParamsError, match="toolResults"):
            await send(client, message("yes", task_id=task.id))
        result = {"toolResults": [{"toolCallId": call["id"], "output": "noon"}]}
        done, _ = await send(client, message(data=result, task_id=task.id))
    assert state(done) == "completed"
    with live.client() as http:
        messages = http.get("/v1/sessions/ext/messages").json()["messages"]
    outputs = [b["output"] for m in messages for b in m["content"] if b["type"] == "tool_result"]
    assert outputs == ["noon"]


async def test_bad_answers_change_nothing(live: Live) -> None:
    async with a2a_client(live.url) as client:
        task, _ = await send(client, message(json.dumps(NOTE), context_id="n-bad"))
        with live.client() as http:
            before = http.get("/v1/sessions/n-bad").json()
        for bad, why in (
            (message("maybe", task_id=task.id), "yes"),  # not an answer
            (message("something new", context_id="n-bad"), "taskId"),  # not on the task
            (message("yes", task_id=task.id, context_id="other"), "not 'other'"),
        ):
            with pytest.raises(InvalidParamsError, match=why):
                await send(client, bad)
        still = await client.get_task(GetTaskRequest(id=task.id))
        with live.client() as http:
            after = http.get("/v1/sessions/n-bad").json()
    assert state(still) == "input_required"
    assert after["version"] == before["version"]
    assert after["status"] == "awaiting_confirmation"


async def test_cancel_running_task(live: Live) -> None:
    plan = [[["gate", {"name": "never"}]], "unreachable"]
    async with a2a_client(live.url, streaming=False) as client:
        request = message(json.dumps(plan), context_id="k1")
        request.configuration.return_immediately = True
        task, _ = await send(client, request)
        while "gate never start" not in live.runs():
            await _tick()
        with pytest.raises(InvalidParamsError, match="running a reply"):
            await send(client, message("meanwhile", context_id="k1"))
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert state(canceled) == "canceled"
        with live.client() as http:
            while http.get("/v1/sessions/k1").json()["status"] != "idle":
                await _tick()
        again, _ = await send(client, message("after", context_id="k1"))
    assert state(again) == "completed", "the context takes new tasks after a cancel"


async def test_subscribe_to_a_running_task(live: Live) -> None:
    plan = [[["gate", {"name": "sub"}]], "done now"]
    async with a2a_client(live.url, streaming=False) as client:
        request = message(json.dumps(plan), context_id="s1")
        request.configuration.return_immediately = True
        task, _ = await send(client, request)
    async with a2a_client(live.url) as client:
        while "gate sub start" not in live.runs():
            await _tick()
        events = client.subscribe(SubscribeToTaskRequest(id=task.id))
        first = await anext(events)
        assert first.WhichOneof("payload") == "task", "the subscription starts with the task"
        live.open_gate("sub")
        rest = [e async for e in events]
    last = rest[-1].status_update
    assert last.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_message_text(last.status.message).strip() == "done now"


async def test_cancel_waiting_task_aborts_the_pause(live: Live) -> None:
    async with a2a_client(live.url) as client:
        task, _ = await send(client, message(json.dumps(NOTE), context_id="k2"))
        canceled = await client.cancel_task(CancelTaskRequest(id=task.id))
        assert state(canceled) == "canceled"
        again, _ = await send(client, message("after", context_id="k2"))
    assert state(again) == "completed"
    assert live.runs() == []


async def test_isolation(live: Live) -> None:
    async with a2a_client(live.url) as alice:
        task, _ = await send(alice, message(json.dumps(NOTE), context_id="mine"))
    async with a2a_client(live.url, BOB) as bob:
        for call in (
            bob.get_task(GetTaskRequest(id=task.id)),
            bob.cancel_task(CancelTaskRequest(id=task.id)),
            send(bob, message("yes", task_id=task.id)),
        ):
            with pytest.raises(TaskNotFoundError):
                await call
        page = await bob.list_tasks(ListTasksRequest())
    assert list(page.tasks) == []
    assert live.runs() == []


def test_keys_and_unknown_agent(live: Live) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "method": "ListTasks", "params": {}}
    with live.client(key=None) as anon:
        assert anon.post("/a2a/planner", json=body).status_code == 401
        assert anon.get("/a2a/planner/rest/tasks").status_code == 401
        card = anon.get("/a2a/planner/.well-known/agent-card.json")
        assert card.status_code == 200, "the card is public"
        assert anon.get("/a2a/nobody/.well-known/agent-card.json").status_code == 404
        root = anon.get("/.well-known/agent-card.json").json()
    assert root == card.json(), "the only agent's card is also at the root"


async def _tick() -> None:
    import asyncio

    await asyncio.sleep(0.02)


@pytest.mark.parametrize("backend", ["sqlite"], indirect=True)
async def test_a_context_keeps_its_recent_ended_tasks(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_a2a_store, "KEEP_ENDED", 2)
    async with a2a_client(live.url) as client:
        waiting, _ = await send(client, message(json.dumps(NOTE), context_id="many"))
        await send(client, message("no", task_id=waiting.id))
        ids = [(await send(client, message(f"t{i}", context_id="many")))[0].id for i in range(3)]
        page = await client.list_tasks(ListTasksRequest(context_id="many"))
        with pytest.raises(TaskNotFoundError):
            await client.get_task(GetTaskRequest(id=waiting.id))
    assert {t.id for t in page.tasks} == set(ids[1:]), "the two that ended last"
    with live.client() as http:
        messages = http.get("/v1/sessions/many/messages").json()["messages"]
    assert len(messages) >= 8, "the session keeps every message"
