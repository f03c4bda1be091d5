"""Against the protocol's reference everything-server (npm, run by Node 22): elicitation,
sampling under an approval, roots, logging, resources through the tools, prompts and
completion. Skipped without it (`tests/conformance/run.sh` installs it); required when
`TETHER_REQUIRE_NODE` is set."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp_testkit import call, everything_stdio, tools_of

from tether.mcp import (
    ElicitationRequest,
    ElicitationResponse,
    MCPClient,
    MCPLogRecord,
    ModelSampler,
    SamplingRequest,
    StdioMCPConfig,
)
from tether.message import AssistantMsg
from tether.model import ScriptedChatModel


def _config() -> StdioMCPConfig:
    return everything_stdio()


class _Seen:
    def __init__(self) -> None:
        self.elicited: list[ElicitationRequest] = []
        self.approved: list[str] = []
        self.logs: list[MCPLogRecord] = []
        self.logged = asyncio.Event()

    async def elicit(self, request: ElicitationRequest) -> ElicitationResponse:
        self.elicited.append(request)
        return ElicitationResponse(action="accept", content={"name": "Ada", "check": True})

    async def approve(self, request: SamplingRequest) -> bool:
        self.approved.append(request.text)
        return True

    async def log(self, record: MCPLogRecord) -> None:
        self.logs.append(record)
        self.logged.set()


@pytest.fixture
async def everything(tmp_path: Path) -> AsyncIterator[tuple[MCPClient, _Seen, ScriptedChatModel]]:
    seen = _Seen()
    model = ScriptedChatModel([AssistantMsg("assistant", "forty-two")])
    client = MCPClient(
        "every",
        True,
        _config(),
        on_elicitation=seen.elicit,
        on_sampling=ModelSampler(model, seen.approve),
        roots=[tmp_path],
        on_log=seen.log,
        log_level="debug",
        resource_tools=True,
    )
    async with client:
        yield client, seen, model


async def test_server_requests_reach_the_handlers(everything, tmp_path: Path) -> None:
    client, seen, model = everything
    tools = await tools_of(client)
    elicited = await call(tools, "mcp__every__trigger-elicitation-request")
    assert "provided the requested information" in str(elicited.output)
    assert seen.elicited[0].requested_schema is not None
    sampled = await call(tools, "mcp__every__trigger-sampling-request", prompt="6*7?")
    assert "forty-two" in str(sampled.output)
    assert "6*7?" in seen.approved[0]
    model.assert_complete()
    roots = await call(tools, "mcp__every__get-roots-list")
    assert tmp_path.as_uri() in str(roots.output)
    await call(tools, "mcp__every__toggle-simulated-logging")
    async with asyncio.timeout(30):
        await seen.logged.wait()
    assert seen.logs[0].server == "every"


async def test_resources_prompts_and_completion(everything) -> None:
    client, _seen, _model = everything
    tools = await tools_of(client)
    listed = await call(tools, "mcp__every__list_resources")
    uri = str(listed).split()[0]
    assert uri.startswith("demo://")
    text = await call(tools, "mcp__every__read_resource", uri=uri)
    assert isinstance(text, str) and text
    messages = await client.get_prompt("args-prompt", {"city": "Paris"})
    assert "Paris" in messages[0]["content"]["text"]
    assert "Engineering" in await client.complete_argument("completable-prompt", "department", "E")


async def test_the_caller_answers_through_events_in_an_agent() -> None:
    """Elicitation answered through its event; sampling under an ask rule: the request
    shows, the user confirms, the model answers."""
    from tether.agent import Agent
    from tether.mcp import (
        ElicitationRequestEvent,
        SamplingRequestEvent,
        answer_elicitation,
        answer_sampling,
        ask_caller,
        confirm_with_caller,
    )
    from tether.message import UserMsg
    from tether.permission import PermissionContext
    from tether.state import AgentState
    from tether.testing import tool_results
    from tether.tool import Toolkit

    tc = ScriptedChatModel.tool_call
    elicit, sample = (
        "mcp__every__trigger-elicitation-request",
        "mcp__every__trigger-sampling-request",
    )
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc(elicit, {}, id="e1")]),
            AssistantMsg("a", [tc(sample, {"prompt": "6*7?"}, id="s1")]),
            AssistantMsg("assistant", "forty-two"),  # the sampling answer
            AssistantMsg("a", "Done."),
        ]
    )
    client = MCPClient(
        "every",
        True,
        _config(),
        on_elicitation=ask_caller,
        on_sampling=ModelSampler(model, confirm_with_caller),
    )
    rules = PermissionContext(allow_rules=[elicit, sample], ask_rules=["McpSample(every)"])
    agent = Agent(
        "bot",
        "p",
        model,
        toolkit=Toolkit(mcps=[client]),
        state=AgentState(permission_context=rules),
    )
    asked: list[str] = []
    events = []
    async with agent.toolkit:
        async for event in agent.reply_stream(UserMsg("user", "go")):
            events.append(event)
            if (question := ElicitationRequestEvent.of(event)) is not None:
                asked.append("elicitation")
                assert question.requested_schema is not None
                answer = {"name": "Ada", "check": True}
                answer_elicitation(question.request_id, ElicitationResponse("accept", answer))
            elif (request := SamplingRequestEvent.of(event)) is not None:
                asked.append("sampling")
                assert "6*7?" in request.data["text"]
                assert model.calls and len(model.calls) == 2  # the model has not run for it yet
                answer_sampling(request.request_id, True)
    assert asked == ["elicitation", "sampling"]
    outputs = {r.id: str(r.output) for r in tool_results(events)}
    assert "provided the requested information" in outputs["e1"]
    assert "forty-two" in outputs["s1"]
    model.assert_complete()
