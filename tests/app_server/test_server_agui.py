"""AG-UI over `tether serve`: runs, interrupts, frontend tools, errors and isolation.

Every event the service sends is validated against `ag-ui-protocol`'s own models; the
order rules are checked by the protocol's JS client (`test_server_agui_client.py`).
"""

from __future__ import annotations

import asyncio
import json
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import httpx
import pytest
from ag_ui.core import Event
from pydantic import TypeAdapter
from svc_team import Served, serve_team

if TYPE_CHECKING:
    from conftest import Live


EVENT: TypeAdapter[Any] = TypeAdapter(Event)


def run_input(thread: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    return {
        "threadId": thread,
        "runId": uuid.uuid4().hex,
        "messages": messages,
        "tools": [],
        "context": [],
        "state": None,
        "forwardedProps": None,
        **extra,
    }


def user(text: Any) -> dict[str, Any]:
    content = text if isinstance(text, str) else json.dumps(text)
    return {"id": uuid.uuid4().hex, "role": "user", "content": content}


def run(client: httpx.Client, body: dict[str, Any], agent: str = "planner") -> list[Any]:
    """POST a run; the AG-UI events it streamed, each validated by ag-ui-protocol."""
    with client.stream(
        "POST", f"/v1/ag-ui/{agent}", json=body, headers={"accept": "text/event-stream"}
    ) as response:
        assert response.status_code == 200, response.read()
        text = response.read().decode()
    frames = [f for f in text.split("\n\n") if f.strip()]
    events = []
    for frame in frames:
        assert frame.startswith("data: "), frame
        events.append(EVENT.validate_json(frame.removeprefix("data: ")))
    return events


def types(events: list[Any]) -> list[str]:
    return [e.type.value for e in events]


def test_text_and_thinking(live: Live) -> None:
    with live.client() as client:
        events = run(client, run_input("t1", [user(["!think pondering|the answer"])]))
    assert types(events) == [
        "RUN_STARTED",
        "REASONING_START",
        "REASONING_MESSAGE_START",
        "REASONING_MESSAGE_CONTENT",
        "REASONING_MESSAGE_END",
        "REASONING_END",
        "TEXT_MESSAGE_START",
        *["TEXT_MESSAGE_CONTENT"] * 2,
        "TEXT_MESSAGE_END",
        "RUN_FINISHED",
    ]
    assert events[3].delta == "pondering"
    assert "".join(e.delta for e in events if e.type.value == "TEXT_MESSAGE_CONTENT") == (
        "the answer "
    )
    assert events[-1].outcome.type == "success"
    assert events[0].thread_id == events[-1].thread_id == "t1"


def test_tool_calls_and_results(live: Live) -> None:
    plan = [[["tick", {"n": 1}], ["tick", {"n": 2}]], "done"]
    with live.client() as client:
        events = run(client, run_input("t2", [user(plan)]))
    names = [e.tool_call_name for e in events if e.type.value == "TOOL_CALL_START"]
    assert names == ["tick", "tick"]
    results = [e.content for e in events if e.type.value == "TOOL_CALL_RESULT"]
    assert sorted(results) == ["tick 1", "tick 2"]
    assert live.runs() == ["tick 1", "tick 2"] or sorted(live.runs()) == ["tick 1", "tick 2"]
    assert events[-1].type.value == "RUN_FINISHED"


def interrupted(client: httpx.Client, thread: str) -> Any:
    plan = [[["save_note", {"name": "a", "text": "x"}]], "saved it"]
    events = run(client, run_input(thread, [user(plan)]))
    finish = events[-1]
    assert finish.type.value == "RUN_FINISHED"
    assert finish.outcome.type == "interrupt"
    (interrupt,) = finish.outcome.interrupts
    assert interrupt.reason == "tool_approval"
    assert interrupt.tool_call_id == interrupt.id
    assert interrupt.metadata["toolName"] == "save_note"
    assert interrupt.metadata["suggestedRules"], "the suggested rules travel in metadata"
    return interrupt


def test_interrupt_approved(live: Live) -> None:
    with live.client() as client:
        interrupt = interrupted(client, "t3")
        assert live.runs() == []
        resume = [
            {"interruptId": interrupt.id, "status": "resolved", "payload": {"approved": True}}
        ]
        events = run(client, run_input("t3", [], resume=resume))
    assert live.runs() == ["save_note a"]
    result = next(e for e in events if e.type.value == "TOOL_CALL_RESULT")
    assert result.content == "saved a"
    assert events[-1].outcome.type == "success"


def test_interrupt_rejected_and_cancelled(live: Live) -> None:
    with live.client() as client:
        for thread, status, payload in (
            ("t4", "resolved", {"approved": False, "reason": "not now"}),
            ("t5", "cancelled", None),
        ):
            interrupt = interrupted(client, thread)
            entry = {"interruptId": interrupt.id, "status": status, "payload": payload}
            events = run(client, run_input(thread, [], resume=[entry]))
            assert events[-1].outcome.type == "success"
    assert live.runs() == []


def test_rules_accepted_with_approval(live: Live) -> None:
    with live.client() as client:
        interrupt = interrupted(client, "t6")
        rules = interrupt.metadata["suggestedRules"]
        payload = {"approved": True, "rules": rules}
        entry = {"interruptId": interrupt.id, "status": "resolved", "payload": payload}
        run(client, run_input("t6", [], resume=[entry]))
        plan = [[["save_note", {"name": "b", "text": "y"}]], "again"]
        events = run(client, run_input("t6", [user(plan)]))
    assert events[-1].outcome.type == "success", "the accepted rule allows the next call"
    assert live.runs() == ["save_note a", "save_note b"]


def test_bad_resume_is_a_run_error_and_changes_nothing(live: Live) -> None:
    with live.client() as client:
        interrupt = interrupted(client, "t7")
        before = client.get("/v1/sessions/t7").json()
        for entry in (
            {"interruptId": "nope", "status": "resolved", "payload": {"approved": True}},
            {
                "interruptId": interrupt.id,
                "status": "resolved",
                "payload": {"approved": True, "rules": [{"tool_name": "Bash"}]},
            },
        ):
            events = run(client, run_input("t7", [], resume=[entry]))
            assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
            assert events[-1].message
        after = client.get("/v1/sessions/t7").json()
    assert after["version"] == before["version"]
    assert after["status"] == "awaiting_confirmation"
    assert live.runs() == []


def test_frontend_tool_round_trip(live: Live) -> None:
    tool = {
        "name": "set_colour",
        "description": "Change the page's background colour.",
        "parameters": {"type": "object", "properties": {"colour": {"type": "string"}}},
    }
    plan = [[["set_colour", {"colour": "teal"}]], "changed it"]
    with live.client() as client:
        first = run(client, run_input("t8", [user(plan)], tools=[tool]))
        finish = first[-1]
        assert finish.outcome.type == "success"
        (call_id,) = finish.outcome.pending_tool_call_ids
        start = next(e for e in first if e.type.value == "TOOL_CALL_START")
        assert (start.tool_call_id, start.tool_call_name) == (call_id, "set_colour")
        answer = {"id": "m2", "role": "tool", "toolCallId": call_id, "content": "colour set"}
        second = run(client, run_input("t8", [user(plan), answer], tools=[tool]))
        messages = client.get("/v1/sessions/t8/messages").json()["messages"]
    assert second[-1].outcome.type == "success"
    assert second[-1].result.strip() == "changed it"
    results = [b for m in messages for b in m["content"] if b["type"] == "tool_result"]
    assert results[0]["output"] == "colour set"


def test_isolation_and_http_errors(live: Live) -> None:
    with live.client() as alice:
        interrupted(alice, "t9")
    entry = {"interruptId": "x", "status": "resolved", "payload": {"approved": True}}
    with live.client("key-bob-9876543210") as bob:
        answer = bob.post("/v1/ag-ui/planner", json=run_input("t9", [], resume=[entry]))
        assert answer.status_code == 404
        assert answer.json()["type"] == "SessionNotFoundError"
        assert bob.get("/v1/sessions/t9").status_code == 404
    with live.client(None) as anonymous:
        assert anonymous.post("/v1/ag-ui/planner", json=run_input("t9", [])).status_code == 401
    with live.client() as alice:
        unknown = alice.post("/v1/ag-ui/nobody", json=run_input("t10", [user("hi")]))
        assert unknown.status_code == 404
        bad = alice.post("/v1/ag-ui/planner", json=run_input("bad id!", [user("hi")]))
        assert bad.status_code == 422


def test_a_frontend_tool_cannot_shadow_the_agents_own(live: Live) -> None:
    shadow = {"name": "save_note", "description": "Save it my way.", "parameters": {}}
    plan = [[["save_note", {"name": "a", "text": "x"}]], "done"]
    with live.client() as client:
        events = run(client, run_input("t11", [user(plan)], tools=[shadow]))
        assert types(events) == ["RUN_STARTED", "RUN_ERROR"]
        assert events[-1].code == "InvalidInputError" and "save_note" in events[-1].message
        assert client.get("/v1/sessions/t11").status_code == 404, "no session was created"
    assert live.runs() == []


@pytest.fixture
def team(backend: Any, test_dir: Path) -> Iterator[Served]:
    """The service serving `subagent_svc`'s team: boss → researcher and writer (asks)."""
    with serve_team(backend, test_dir) as served:
        yield served


def by_subagent(events: list[Any]) -> dict[str, list[Any]]:
    """Each sub-agent invocation's events (started/finished/error included), in order."""
    out: dict[str, list[Any]] = {}
    for event in events:
        run_id = getattr(event, "subagent_run_id", None)
        if run_id is not None and event.type.value != "RUN_FINISHED":
            out.setdefault(run_id, []).append(event)
    return out


def test_a_delegating_agent_streams_its_children_as_subagents(team: Served) -> None:
    with team.client() as client:
        first = run(client, run_input("ta1", [user("go")]), agent="team")
        finish = first[-1]
        assert finish.outcome.type == "interrupt"
        (interrupt,) = finish.outcome.interrupts
        assert interrupt.id == interrupt.tool_call_id == "boss1/wri0"
        assert interrupt.metadata["agentPath"] == ["writer"]
        assert interrupt.message.startswith("writer wants to run publish")

        groups = by_subagent(first)
        assert len(groups) == 2
        started = {g[0].name: g for g in groups.values()}
        researcher, writer = started["researcher"], started["writer"]
        assert researcher[0].type.value == "SUBAGENT_STARTED"
        assert researcher[0].parent_tool_call_id == "boss0"
        assert researcher[0].parent_subagent_run_id is None
        assert [e.type.value for e in researcher[1:]] == [
            "TOOL_CALL_START", "TOOL_CALL_ARGS", "TOOL_CALL_END", "TOOL_CALL_RESULT",
            "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END", "SUBAGENT_FINISHED",
        ]  # fmt: skip
        assert researcher[6].delta == "found it"  # the child's own text, attributed to it
        assert researcher[1].tool_call_id == "boss0/res0"
        assert researcher[-1].result == "found it"
        assert researcher[-1].outcome is None or researcher[-1].outcome.type == "success"
        assert writer[0].parent_tool_call_id == "boss1"
        assert writer[-1].type.value == "SUBAGENT_FINISHED"
        assert writer[-1].outcome.type == "suspended"
        assert writer[-1].outcome.interrupt_ids == ["boss1/wri0"]
        assert interrupt.subagent_run_id == writer[0].subagent_run_id
        # the parent's own conversation holds only its own calls and results
        own = [e for e in first if getattr(e, "subagent_run_id", None) is None]
        assert {e.tool_call_id for e in own if e.type.value == "TOOL_CALL_START"} == {
            "boss0", "boss1",
        }  # fmt: skip
        results = {e.tool_call_id: e.content for e in own if e.type.value == "TOOL_CALL_RESULT"}
        assert results == {"boss0": "found it"}

        payload = {
            "approved": True,
            "rules": interrupt.metadata["suggestedRules"],
            "rulesScope": "agent_and_parents",
        }
        entry = {"interruptId": interrupt.id, "status": "resolved", "payload": payload}
        second = run(client, run_input("ta1", [], resume=[entry]), agent="team")
    assert second[-1].outcome.type == "success" and second[-1].result == "all done"
    [again] = by_subagent(second).values()  # the same invocation continues
    assert again[0].type.value == "SUBAGENT_STARTED"
    assert again[0].subagent_run_id == writer[0].subagent_run_id
    assert [e.type.value for e in again[1:]] == [
        "TOOL_CALL_RESULT", "TEXT_MESSAGE_START", "TEXT_MESSAGE_CONTENT", "TEXT_MESSAGE_END",
        "SUBAGENT_FINISHED",
    ]  # fmt: skip
    assert again[1].tool_call_id == "boss1/wri0" and again[1].content == "published d"
    assert again[-1].result == "written"
    own_results = [e for e in second if e.type.value == "TOOL_CALL_RESULT" and
                   e.subagent_run_id is None]  # fmt: skip
    assert [(e.tool_call_id, e.content) for e in own_results] == [("boss1", "written")]
    assert sorted(team.runs()) == ["publish wri0", "wait_gate res0 start"]

    async def parent_rules() -> list[str]:
        storage, _ = team.backend.pair()
        record = await storage.get_session("alice", "team", "ta1")
        assert record is not None
        return [str(r) for r in record.state.permission_context.allow_rules]

    assert asyncio.run(parent_rules()) == ["publish"], "rulesScope reached the parent"
