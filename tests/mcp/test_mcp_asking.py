"""A server's elicitation and sampling answered by the reply's caller through events
(`ask_caller`, `confirm_with_caller`), with `McpElicit` / `McpSample` rules, against the
real features server driven by a scripted agent."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from tether.agent import Agent
from tether.event import CustomEvent, EventType
from tether.mcp import (
    ElicitationRequestEvent,
    ElicitationResponse,
    MCPClient,
    ModelSampler,
    SamplingRequestEvent,
    StdioMCPConfig,
    answer_elicitation,
    answer_sampling,
    ask_caller,
    confirm_with_caller,
)
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionMode
from tether.state import AgentState
from tether.testing import tool_results
from tether.tool import Toolkit

FEATURES = Path(__file__).parent / "servers" / "features_server.py"
tc = ScriptedChatModel.tool_call


def _agent(tool: str, args: dict[str, Any], *, rules: list[str], **client: Any) -> Agent:
    config = StdioMCPConfig(command=sys.executable, args=[str(FEATURES)])
    mcp = MCPClient("feat", True, config, **client)
    model = ScriptedChatModel(
        [AssistantMsg("a", [tc(tool, args, id="c1")]), AssistantMsg("a", "ok")]
    )
    state = AgentState(
        permission_context=PermissionContext(
            allow_rules=[tool, *rules], mode=PermissionMode.DEFAULT
        )
    )
    return Agent(
        name="bot", system_prompt="p", model=model, toolkit=Toolkit(mcps=[mcp]), state=state
    )


async def _run(agent: Agent, answer: Any) -> tuple[list[Any], str]:
    """The reply's events, `answer` called on each; and the tool's output."""
    events = []
    async with agent.toolkit:
        async for event in agent.reply_stream(UserMsg("user", "go")):
            events.append(event)
            answer(event)
    [result] = tool_results(events)
    return events, str(result.output)


async def test_the_caller_answers_an_elicitation_while_the_call_waits() -> None:
    asked: list[ElicitationRequestEvent] = []

    def answer(event: Any) -> None:
        request = ElicitationRequestEvent.of(event)
        if request is not None:
            asked.append(request)
            assert answer_elicitation(
                request.request_id, ElicitationResponse("accept", {"name": "Ada"})
            )
            assert not answer_elicitation(request.request_id, ElicitationResponse("decline"))

    agent = _agent("mcp__feat__ask", {}, rules=[], on_elicitation=ask_caller)
    events, output = await _run(agent, answer)
    assert output == "hello Ada x3"  # `count` took the schema's default
    [request] = asked
    assert request.data["server"] == "feat" and request.data["message"] == "What is your name?"
    assert request.data["tool_call_id"] == "c1" and request.data["mode"] == "form"
    assert request.requested_schema is not None
    assert set(request.requested_schema["properties"]) == {"name", "count"}
    assert request.type is EventType.CUSTOM  # on the wire, an ordinary custom event
    wire = CustomEvent.model_validate_json(request.model_dump_json())
    assert ElicitationRequestEvent.of(wire) == request


async def test_a_headless_reply_declines_by_default() -> None:
    agent = _agent("mcp__feat__ask", {}, rules=[])
    async with agent.toolkit:
        reply = await agent.reply(UserMsg("user", "go"))
    assert reply.get_text_content() == "ok"
    [result] = [b for m in agent.state.context for b in m.tool_results]
    assert result.output == "no answer: decline"


async def test_a_deny_rule_declines_without_asking() -> None:
    agent = _agent("mcp__feat__ask", {}, rules=[], on_elicitation=ask_caller)
    agent.state.permission_context.deny_rules = PermissionContext(
        deny_rules=["McpElicit(fe*)"]
    ).deny_rules
    events, output = await _run(agent, lambda e: None)
    assert output == "no answer: decline"
    assert not [e for e in events if ElicitationRequestEvent.of(e)]


async def test_an_unanswered_elicitation_times_out_as_cancel() -> None:
    agent = _agent(
        "mcp__feat__ask", {}, rules=[], on_elicitation=ask_caller, elicitation_timeout=0.2
    )
    events, output = await _run(agent, lambda e: None)
    assert output == "no answer: cancel"
    assert [e for e in events if ElicitationRequestEvent.of(e)]


def _sampler() -> ModelSampler:
    model = ScriptedChatModel([AssistantMsg("assistant", "42")])
    return ModelSampler(model, confirm_with_caller)


async def test_sampling_under_an_ask_rule_pauses_for_the_user() -> None:
    seen: list[SamplingRequestEvent] = []

    def confirm(event: Any) -> None:
        request = SamplingRequestEvent.of(event)
        if request is not None:
            seen.append(request)
            assert answer_sampling(request.request_id, True)

    agent = _agent(
        "mcp__feat__sample",
        {"question": "6*7?"},
        rules=[],
        on_sampling=_sampler(),
    )
    agent.state.permission_context.ask_rules = PermissionContext(ask_rules=["McpSample"]).ask_rules
    _, output = await _run(agent, confirm)
    assert output == "model said: 42"
    [request] = seen
    assert request.data["server"] == "feat" and "user: 6*7?" in request.data["text"]


async def test_sampling_refused_by_the_user_or_a_rule() -> None:
    def refuse(event: Any) -> None:
        request = SamplingRequestEvent.of(event)
        if request is not None:
            answer_sampling(request.request_id, False)

    agent = _agent("mcp__feat__sample", {"question": "q"}, rules=[], on_sampling=_sampler())
    _, output = await _run(agent, refuse)
    assert "declined" in output

    agent = _agent(
        "mcp__feat__sample", {"question": "q"}, rules=["McpSample(other)"], on_sampling=_sampler()
    )
    agent.state.permission_context.deny_rules = PermissionContext(
        deny_rules=["McpSample(feat)"]
    ).deny_rules
    events, output = await _run(agent, lambda e: None)
    assert "denied" in output and not [e for e in events if SamplingRequestEvent.of(e)]


async def test_an_allow_rule_samples_without_asking() -> None:
    agent = _agent(
        "mcp__feat__sample", {"question": "q"}, rules=["McpSample(feat)"], on_sampling=_sampler()
    )
    events, output = await _run(agent, lambda e: None)
    assert output == "model said: 42"
    assert not [e for e in events if SamplingRequestEvent.of(e)]
