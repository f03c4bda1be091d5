"""Elicitation over `tether serve`: the question comes on the reply's SSE stream and the
answer goes to `POST /v1/sessions/{id}/mcp-requests/{request_id}` while the call waits."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp_testkit import everything_stdio

from _ports import UvicornThread
from tether.agent import Agent
from tether.app.server import create_app
from tether.app.storage import SQLiteEventLog, SQLiteStorage
from tether.mcp import MCPClient, StdioMCPConfig, ask_caller
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit

FEATURES = Path(__file__).parent / "servers" / "features_server.py"
KEYS = {"key-alice-0123456789": "alice", "key-bob-9876543210": "bob"}


SERVERS = {
    # name: (config, the tool that asks, an answer, what the tool then says)
    "features": (
        lambda: StdioMCPConfig(command=sys.executable, args=[str(FEATURES)]),
        "ask",
        {"name": "Ada"},
        "hello Ada x3",
    ),
    "everything": (
        everything_stdio,
        "trigger-elicitation-request",
        {"name": "Ada", "check": True},
        "provided the requested information",
    ),
}


@pytest.fixture(params=sorted(SERVERS))
def served(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[str, Any]]:
    make, tool, answer, said = SERVERS[request.param]
    mcp = MCPClient("feat", True, make(), on_elicitation=ask_caller)
    call = ScriptedChatModel.tool_call(f"mcp__feat__{tool}", {}, id="c1")
    model = ScriptedChatModel([AssistantMsg("a", [call]), AssistantMsg("a", "done")])
    agent = Agent(name="asker", system_prompt="p", model=model, toolkit=Toolkit(mcps=[mcp]))
    storage, events = SQLiteStorage(tmp_path / "s.db"), SQLiteEventLog(tmp_path / "e.db")
    app = create_app({"asker": agent}, storage, events=events, api_keys=KEYS)
    with UvicornThread(app) as server:
        yield server.url, (answer, said)


def _client(url: str, key: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"authorization": f"Bearer {key}"}, timeout=60)


def _frames(response: httpx.Response) -> Iterator[tuple[str, dict[str, Any]]]:
    fields: dict[str, str] = {}
    for line in response.iter_lines():
        if not line:
            if "data" in fields:
                yield fields["event"], json.loads(fields["data"])
            fields = {}
        elif not line.startswith(":"):
            name, _, value = line.partition(": ")
            fields[name] = value


def test_an_elicitation_is_answered_over_sse_and_post(served: tuple[str, Any]) -> None:
    url, (answer, said) = served
    with _client(url, "key-alice-0123456789") as alice, _client(url, "key-bob-9876543210") as bob:
        sid = alice.post("/v1/sessions", json={"agent_id": "asker"}).json()["session_id"]
        assert alice.patch(f"/v1/sessions/{sid}", json={"permission_mode": "bypass"}).is_success
        body = {"input": {"role": "user", "content": "ask me"}}
        headers = {"accept": "text/event-stream"}
        seen: list[tuple[str, dict[str, Any]]] = []
        with alice.stream("POST", f"/v1/sessions/{sid}/replies", json=body, headers=headers) as r:
            for event, data in _frames(r):
                seen.append((event, data))
                if event == "custom" and data["name"] == "mcp_elicitation_request":
                    asked = data["data"]
                    path = f"/v1/sessions/{sid}/mcp-requests/{asked['request_id']}"
                    accept = {"action": "accept", "content": answer}
                    assert bob.post(path, json=accept).status_code == 404  # not bob's session
                    assert alice.post(path, json={"approved": True}).status_code == 409
                    ok = alice.post(path, json=accept)
                    assert ok.status_code == 202, ok.text
                    assert alice.post(path, json=accept).status_code == 409  # answered already
    assert asked["server"] == "feat" and asked["message"]
    assert "name" in asked["requested_schema"]["properties"]
    [result] = [d for e, d in seen if e == "tool_result_end"]
    assert said in str(result["tool_result"]["output"])
    assert seen[-1][0] == "reply_end"
    assert "Ada" not in json.dumps([d for e, d in seen if e == "custom"])


def test_resources_are_listed_and_read_for_the_user(served: tuple[str, Any]) -> None:
    url, _ = served
    with _client(url, "key-alice-0123456789") as alice, _client(url, "key-bob-9876543210") as bob:
        sid = alice.post("/v1/sessions", json={"agent_id": "asker"}).json()["session_id"]
        listing = alice.get(f"/v1/sessions/{sid}/mcp-resources").json()
        assert listing["unavailable"] == {}
        assert listing["resources"] and {r["server"] for r in listing["resources"]} == {"feat"}
        texts = [
            r for r in listing["resources"] if r.get("mime_type") != "application/octet-stream"
        ]
        read = alice.get(
            f"/v1/sessions/{sid}/mcp-resources/read",
            params={"server": "feat", "uri": texts[0]["uri"]},
        )
        assert read.status_code == 200 and read.json()["text"]
        params = {"server": "nope", "uri": "x://y"}
        assert alice.get(f"/v1/sessions/{sid}/mcp-resources/read", params=params).status_code == 422
        assert bob.get(f"/v1/sessions/{sid}/mcp-resources").status_code == 404
