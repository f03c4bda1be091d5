"""Version-1 states (the full JSON form) load, migrate to version 2 and round-trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tether.errors import StateVersionError
from tether.message import ToolCallState, ToolResultBlock
from tether.state import SCHEMA_VERSION, AgentState

FIXTURES = Path(__file__).parent / "fixtures"


def _v1() -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / "state_v1_full.json").read_text())
    assert data["schema_version"] == 1
    return data


def test_the_v1_fixture_loads_with_every_value() -> None:
    state = AgentState.model_validate_json(json.dumps(_v1()))
    assert state.schema_version == SCHEMA_VERSION
    assert state.usage.cost == pytest.approx(0.0123) and state.usage.cache_read_tokens == 800
    assert state.plugins == {"git": 2, "search": 1}
    assert state.tool_state["plugin_activation"]["activated"] == {"git": 1}
    assert state.reply is not None and state.reply.iteration == 2
    assert state.reply.structured_json_schema is not None
    assert state.reply.structured_json_schema["required"] == ["answer"]
    pending = state.pending
    assert pending is not None and [c.id for c in pending.awaiting_confirmation] == ["call-2"]
    assert pending.awaiting_confirmation[0].suggested_rules[0].rule_content == "make deploy"
    done = state.context[-2]
    assert [b.type for b in done.content] == [
        "tool_call",
        "tool_call",
        "tool_result",
        "tool_result",
        "text",
    ]
    assert done.tool_calls[1].metadata == {"thought_signature": "abc"}
    result = done.tool_results[1]
    assert isinstance(result, ToolResultBlock) and result.state == "error"
    assert result.get_text() == "hi" and result.metadata == {"offloaded": "/tmp/x"}
    assert done.usage is not None and done.usage.cost is None


def test_the_v1_fixture_round_trips_and_keeps_its_ids() -> None:
    v1 = _v1()
    state = AgentState.model_validate(v1)
    again = AgentState.model_validate_json(state.model_dump_json())
    assert again == state
    for raw, msg in zip(v1["context"], again.context, strict=True):
        assert [b["id"] for b in raw["content"]] == [b.id for b in msg.content]
        assert raw["created_at"] == msg.created_at
    # v1 ids are all made up (none derived), so only the defaults go: about a fifth.
    assert len(state.model_dump_json()) < 0.85 * len(json.dumps(v1, separators=(",", ":")))


def test_a_v1_state_with_running_calls_and_no_cost_loads() -> None:
    v1 = _v1()
    reply = v1["context"][-1]
    for block in reply["content"]:
        if block["type"] == "tool_call":
            block["state"] = "running"
    v1["usage"]["cost"] = None
    state = AgentState.model_validate_json(json.dumps(v1))
    assert state.usage.cost is None
    pending = state.pending
    assert pending is not None and {c.id for c in pending.unknown_outcome} == {"call-1", "call-2"}
    again = AgentState.model_validate_json(state.model_dump_json())
    assert again == state
    assert again.reply_msg().tool_calls[0].state is ToolCallState.RUNNING  # type: ignore[union-attr]


def test_a_v1_call_without_a_state_stays_pending_though_answered() -> None:
    v1 = _v1()
    done = v1["context"][-2]
    del done["content"][0]["state"]  # v1's default: pending
    state = AgentState.model_validate(v1)
    assert state.context[-2].tool_calls[0].state is ToolCallState.PENDING
    assert AgentState.model_validate_json(state.model_dump_json()) == state


def test_the_v1_cursor_field_is_renamed() -> None:
    v1 = _v1()
    schema = v1["reply"]["structured_schema"]
    state = AgentState.model_validate(v1)
    assert state.reply is not None and state.reply.structured_json_schema == schema
    assert "structured_schema" not in json.loads(state.model_dump_json())["reply"]


def test_a_version_newer_than_this_tether_is_refused() -> None:
    v1 = _v1()
    v1["schema_version"] = SCHEMA_VERSION + 1
    with pytest.raises(StateVersionError, match="upgrade tether"):
        AgentState.model_validate_json(json.dumps(v1))


def test_the_v2_fixture_loads_as_the_v1_one_plus_a_string_message() -> None:
    v2 = (FIXTURES / "state_v2_full.json").read_text()
    state = AgentState.model_validate_json(v2)
    from_v1 = AgentState.model_validate(_v1())
    assert state.context[:-1] == from_v1.context
    assert state.model_dump(exclude={"context", "tokens_since_anchor"}) == from_v1.model_dump(
        exclude={"context", "tokens_since_anchor"}
    )
    last = state.context[-1]
    assert last.get_text_content() == "a string message"
    assert last.content[0].id == f"{last.id}.0"
    again = state.model_dump_json()  # written as version 3 now: shorter, loads back equal
    assert json.loads(again)["schema_version"] == SCHEMA_VERSION == 3
    assert AgentState.model_validate_json(again) == state
    assert len(again) < len(json.dumps(json.loads(v2), separators=(",", ":")))
