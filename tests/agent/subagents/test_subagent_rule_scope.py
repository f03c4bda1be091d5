"""Rules accepted with a sub-agent's call: that sub-agent's only (the default), or, when the
user chooses (`ConfirmResult.rules_scope`), every agent above it too."""

from __future__ import annotations

import json
from typing import Any, Literal

import pytest
import subagent_team as team

from tether.event import ConfirmResult, RequireUserConfirmEvent, UserConfirmResultEvent
from tether.message import UserMsg
from tether.permission import PermissionRule
from tether.state import AgentState

Scope = Literal["agent", "agent_and_parents"]


def allow_rules(state: dict[str, Any]) -> list[str]:
    rules = state.get("permission_context", {}).get("allow_rules", [])  # defaults not written
    return [r["tool_name"] for r in rules]


def nested(state: dict[str, Any], tool: str, call_id: str) -> dict[str, Any]:
    """The child's state in a saved state's record for `call_id`."""
    record: dict[str, Any] = state["tool_state"][tool][call_id]
    return record["state"]  # type: ignore[no-any-return]


def answer(pause: RequireUserConfirmEvent, scope: Scope) -> UserConfirmResultEvent:
    [call] = pause.tool_calls
    return UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[
            ConfirmResult(
                confirmed=True, tool_call=call, rules=call.suggested_rules, rules_scope=scope
            )
        ],
    )


async def paused_grand() -> tuple[Any, RequireUserConfirmEvent]:
    agent = team.grand_team()
    msg = await agent.reply(UserMsg("user", "go"))
    [event] = msg.metadata["pause_events"]
    return agent, RequireUserConfirmEvent.model_validate(event)


@pytest.mark.parametrize("scope", ["agent", "agent_and_parents"])
async def test_a_grandchilds_rule_reaches_its_parents_only_when_asked(scope: Scope) -> None:
    agent, pause = await paused_grand()
    assert pause.tool_calls[0].id == "boss0/edi0/wri0"
    saves: list[dict[str, Any]] = []

    async def checkpoint(state: AgentState) -> None:
        saves.append(json.loads(state.model_dump_json()))

    msg = await agent.reply(answer(pause, scope), checkpoint=checkpoint)
    assert msg.get_text_content() == "all done [boss0:success]"
    # the first save after the resume holds the tree as the answer left it
    first = saves[0]
    editor = nested(first, "editor", "boss0")
    writer = nested(editor, "writer", "edi0")
    assert allow_rules(writer) == []  # the writer remembers when it resumes: a later save
    editors = [nested(s, "editor", "boss0") for s in saves if "tool_state" in s]
    writers = [nested(e, "writer", "edi0") for e in editors if "tool_state" in e]
    assert allow_rules(writers[-1]) == ["publish"]  # the call's own agent, either way
    wanted = ["publish"] if scope == "agent_and_parents" else []
    assert allow_rules(first) == wanted
    assert allow_rules(editors[-1]) == wanted
    assert [r.tool_name for r in agent.state.permission_context.allow_rules] == wanted


async def test_the_scope_is_optional_in_json_and_round_trips() -> None:
    agent, pause = await paused_grand()
    event = answer(pause, "agent_and_parents")
    again = UserConfirmResultEvent.model_validate_json(event.model_dump_json())
    assert again.confirm_results[0].rules_scope == "agent_and_parents"
    old = json.loads(event.model_dump_json())
    del old["confirm_results"][0]["rules_scope"]  # an answer from before the field
    assert UserConfirmResultEvent.model_validate(old).confirm_results[0].rules_scope == "agent"
    with pytest.raises(ValueError, match="rules_scope"):
        ConfirmResult(confirmed=True, tool_call=pause.tool_calls[0], rules_scope="everyone")  # type: ignore[arg-type]


async def test_a_too_broad_rule_scoped_to_the_parents_changes_nothing() -> None:
    agent, pause = await paused_grand()
    before = agent.state.model_dump_json()
    [call] = pause.tool_calls
    broad = PermissionRule(tool_name="Bash")
    event = UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[
            ConfirmResult(
                confirmed=True, tool_call=call, rules=[broad], rules_scope="agent_and_parents"
            )
        ],
    )
    with pytest.raises(ValueError, match="Bash"):
        await agent.reply(event)
    assert agent.state.model_dump_json() == before
