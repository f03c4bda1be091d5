"""The A2A agent card (checked against the spec's schema) and a recorded task transcript,
both validated by `a2a-contract-test` (its own CLI)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    GetTaskRequest,
    StreamResponse,
    Task,
    TaskPushNotificationConfig,
    TaskState,
)
from a2a.utils.errors import A2AError, PushNotificationNotSupportedError
from a2a.utils.proto_utils import validate_proto_required_fields
from a2a_helpers import a2a_client, message, send
from google.protobuf.json_format import MessageToDict, ParseDict
from svc_agents import make_agent
from svc_helpers import ThreadServer

from tether.app.server import create_app
from tether.app.storage import SQLiteStorage

if TYPE_CHECKING:
    from a2a.client import Client

    from conftest import Live

NOTE = [[["save_note", {"name": "a", "text": "x"}]], "saved it"]
OPERATIONS = ["send_message", "send_streaming_message", "get_task", "list_tasks", "cancel_task"]


def card_of(live: Live, path: str = "/a2a/planner/.well-known/agent-card.json") -> dict[str, Any]:
    with live.client(key=None) as anon:
        response = anon.get(path)
    assert response.status_code == 200
    body: dict[str, Any] = response.json()
    return body


def test_card_follows_the_spec(live: Live) -> None:
    body = card_of(live)
    card = ParseDict(body, AgentCard())  # unknown fields are refused
    validate_proto_required_fields(card)  # every REQUIRED field of the spec is set
    interfaces = {i.protocol_binding: i for i in card.supported_interfaces}
    assert set(interfaces) == {"JSONRPC", "HTTP+JSON"}
    assert all(i.protocol_version == "1.0" for i in card.supported_interfaces)
    assert interfaces["JSONRPC"].url == f"{live.url}/a2a/planner"
    assert interfaces["HTTP+JSON"].url == f"{live.url}/a2a/planner/rest"
    assert card.capabilities.streaming and not card.capabilities.push_notifications
    assert card.description == "You follow the plan."
    skills = {s.id: s for s in card.skills}
    assert set(skills) == {"planner", "tool:save_note", "tool:lookup", "tool:tick", "tool:gate"}
    assert skills["tool:save_note"].description == "Save a note (asks first)."
    scheme = card.security_schemes["apiKey"].http_auth_security_scheme
    assert scheme.scheme == "Bearer"
    assert [list(r.schemes) for r in card.security_requirements] == [["apiKey"]]


def profile(card: dict[str, Any]) -> dict[str, Any]:
    """The card in a2a-contract-test's profile (its own shape, not A2A's card schema)."""
    streaming = bool(card["capabilities"].get("streaming"))
    return {
        "name": card["name"],
        "version": card["version"],
        "endpoint": card["supportedInterfaces"][0]["url"],
        "capabilities": [
            {
                "name": op,
                "input_modes": card["defaultInputModes"],
                "output_modes": card["defaultOutputModes"],
                "streaming": streaming and op == "send_streaming_message",
            }
            for op in OPERATIONS
        ],
        "content_types": ["application/json"],
    }


def lifecycle_state(task: Task | Any) -> str:
    name = TaskState.Name(task.status.state).removeprefix("TASK_STATE_").lower()
    return {"canceled": "cancelled"}.get(name, name)


def streamed(operation: str, payload: Any, responses: list[StreamResponse]) -> list[dict[str, Any]]:
    entries = []
    for r in responses:
        kind = r.WhichOneof("payload")
        event = getattr(r, kind)
        task_id = event.id if kind == "task" else event.task_id
        entry: dict[str, Any] = {"task_id": task_id, "result": MessageToDict(event)}
        if kind in ("task", "status_update"):
            entry["state"] = lifecycle_state(event)
        op = "create_task" if kind == "task" else f"{operation}:{kind}"
        entries.append({"operation": op, "request": {"payload": payload}, "response": entry})
    return entries


async def record(client: Client) -> list[dict[str, Any]]:
    """One task's lifecycle through the SDK client, in the tool's transcript format."""
    ask = message(json.dumps(NOTE), context_id="transcript")
    _, responses = await send(client, ask)
    transcript = streamed("send_streaming_message", MessageToDict(ask), responses)
    task_id = transcript[0]["response"]["task_id"]

    async def poll() -> None:
        task = await client.get_task(GetTaskRequest(id=task_id))
        result = {"task_id": task_id, "state": lifecycle_state(task), "result": MessageToDict(task)}
        transcript.append({"operation": "poll_task", "request": {"payload": {"id": task_id}}, "response": result})  # fmt: skip

    await poll()
    answer = message("yes", task_id=task_id)
    _, responses = await send(client, answer)
    transcript += streamed("send_streaming_message", MessageToDict(answer), responses)
    await poll()
    for operation, call in (
        ("cancel_task", client.cancel_task(CancelTaskRequest(id=task_id))),
        (
            "create_push_config",
            client.create_task_push_notification_config(
                TaskPushNotificationConfig(task_id=task_id, url="https://example.com/hook")
            ),
        ),
    ):
        with pytest.raises(A2AError) as caught:
            await call
        code = (
            "unsupported_capability"
            if isinstance(caught.value, PushNotificationNotSupportedError)
            else type(caught.value).__name__
        )
        error = {"code": code, "message": str(caught.value)}
        transcript.append({"operation": operation, "request": {"payload": {"id": task_id}}, "response": {"task_id": task_id, "error": error}})  # fmt: skip
    return transcript


async def test_contract_test_passes_card_and_transcript(live: Live, tmp_path: Path) -> None:
    async with a2a_client(live.url) as client:
        transcript = await record(client)
    states = [e["response"].get("state") for e in transcript]
    assert [s for s in states if s] == [
        "submitted",
        "working",
        "input_required",
        "input_required",
        "working",
        "completed",
        "completed",
    ]
    card_path = tmp_path / "agent-card.json"
    card_path.write_text(json.dumps(profile(card_of(live))))
    (tmp_path / "contract-transcript.json").write_text(json.dumps(transcript))
    out = tmp_path / "report.json"
    command = [sys.executable, "-m", "a2a_contract_test.cli", "run", "--agent-card", str(card_path)]
    done = subprocess.run([*command, "--format", "json", "--out", str(out)], check=False)
    report = json.loads(out.read_text())
    assert done.returncode == 0, report["findings"]
    assert report["passed"] and report["findings"] == []


def test_contract_test_rejects_a_broken_card(live: Live, tmp_path: Path) -> None:
    broken = profile(card_of(live))
    del broken["version"]
    broken["endpoint"] = "ftp://nowhere"
    card_path = tmp_path / "agent-card.json"
    card_path.write_text(json.dumps(broken))
    (tmp_path / "contract-transcript.json").write_text("[]")
    command = [sys.executable, "-m", "a2a_contract_test.cli", "run", "--agent-card", str(card_path)]
    done = subprocess.run([*command, "--format", "json"], capture_output=True, check=False)
    assert done.returncode == 1, "the tool does fail a card missing its version"
    messages = [f["message"] for f in json.loads(done.stdout)["findings"]]
    assert "missing required field `version`" in messages


def test_root_card_only_for_a_single_agent(live: Live) -> None:
    assert card_of(live, "/.well-known/agent-card.json") == card_of(live)


def test_a_keyless_service_declares_no_security(tmp_path: Path) -> None:
    app = create_app({"planner": make_agent()}, SQLiteStorage(tmp_path / "s.db"))
    with ThreadServer(app) as server, httpx.Client(base_url=server.url) as anon:
        body = anon.get("/a2a/planner/.well-known/agent-card.json").json()
    card = ParseDict(body, AgentCard())
    validate_proto_required_fields(card)
    assert not card.security_schemes and not card.security_requirements


def test_root_card_is_404_with_several_agents(tmp_path: Path) -> None:
    agents = {"planner": make_agent(), "helper": make_agent()}
    app = create_app(agents, SQLiteStorage(tmp_path / "s.db"), api_keys={"k-0123456789": "u"})
    with ThreadServer(app) as server, httpx.Client(base_url=server.url) as anon:
        root = anon.get("/.well-known/agent-card.json")
        helper = anon.get("/a2a/helper/.well-known/agent-card.json").json()
    assert root.status_code == 404
    assert "/a2a/helper/.well-known/agent-card.json" in root.json()["detail"]
    assert helper["supportedInterfaces"][0]["url"] == f"{server.url}/a2a/helper"
