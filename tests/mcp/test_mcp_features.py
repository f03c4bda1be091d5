"""Elicitation, sampling, roots, logging, resources, prompts and completion against a real
FastMCP server (stdio, and streamable HTTP for elicitation)."""

from __future__ import annotations

import logging
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from mcp_testkit import Recorder, call, tools_of

from _ports import reporting_server
from tether.mcp import (
    ElicitationRequest,
    ElicitationResponse,
    HttpMCPConfig,
    MCPClient,
    MCPLogRecord,
    SamplingRequest,
    SamplingResponse,
    StdioMCPConfig,
)
from tether.message import ToolResultState

FEATURES = Path(__file__).parent / "servers" / "features_server.py"


def features_stdio() -> StdioMCPConfig:
    return StdioMCPConfig(command=sys.executable, args=[str(FEATURES)])


@pytest.fixture(scope="module")
def features_http() -> Iterator[str]:
    with reporting_server(FEATURES, "--http") as (_, port):
        yield f"http://127.0.0.1:{port}/mcp"


async def test_elicitation_is_declined_without_a_handler() -> None:
    async with MCPClient("feat", True, features_stdio()) as client:
        result = await call(await tools_of(client), "mcp__feat__ask")
    assert result.output == "no answer: decline"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_elicitation_reaches_the_handler_and_defaults_fill_in(
    transport: str, request: pytest.FixtureRequest
) -> None:
    asked: list[ElicitationRequest] = []

    async def answer(req: ElicitationRequest) -> ElicitationResponse:
        asked.append(req)
        return ElicitationResponse(action="accept", content={"name": "Ada"})

    config: Any = (
        features_stdio()
        if transport == "stdio"
        else HttpMCPConfig(url=request.getfixturevalue("features_http"))
    )
    async with MCPClient("feat", True, config, on_elicitation=answer) as client:
        recorder = Recorder()
        result = await call(await tools_of(client), "mcp__feat__ask", recorder.context)
    assert result.output == "hello Ada x3"  # `count` took the schema's default (SEP-1034)
    assert [(r.server, r.message, r.mode) for r in asked] == [
        ("feat", "What is your name?", "form")
    ]
    assert asked[0].requested_schema is not None
    assert [e.name for e in recorder.events] == ["mcp_elicitation"]
    assert recorder.events[0].data["tool_call_id"] == "call-1"


async def test_a_slow_elicitation_answer_times_out_as_cancel() -> None:
    import asyncio

    async def never(req: ElicitationRequest) -> ElicitationResponse:
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    client = MCPClient(
        "feat", True, features_stdio(), on_elicitation=never, elicitation_timeout=0.2
    )
    async with client:
        result = await call(await tools_of(client), "mcp__feat__ask")
    assert result.output == "no answer: cancel"


async def test_sampling_is_refused_without_a_handler() -> None:
    async with MCPClient("feat", True, features_stdio()) as client:
        result = await call(await tools_of(client), "mcp__feat__sample", question="6*7?")
    assert result.state == ToolResultState.ERROR


async def test_sampling_goes_through_the_handler_and_none_declines() -> None:
    seen: list[SamplingRequest] = []
    allow = True

    async def sample(req: SamplingRequest) -> SamplingResponse | None:
        seen.append(req)
        return SamplingResponse(text="42", model="scripted") if allow else None

    async with MCPClient("feat", True, features_stdio(), on_sampling=sample) as client:
        tools = await tools_of(client)
        first = await call(tools, "mcp__feat__sample", question="6*7?")
        allow = False
        second = await call(tools, "mcp__feat__sample", question="again?")
    assert first.output == "model said: 42"
    assert seen[0].text == "user: 6*7?" and seen[0].max_tokens == 50
    assert second.state == ToolResultState.ERROR


async def test_roots_are_listed_from_a_callable(tmp_path: Path) -> None:
    folders = [tmp_path]
    async with MCPClient("feat", True, features_stdio(), roots=lambda: folders) as client:
        tools = await tools_of(client)
        assert (await call(tools, "mcp__feat__roots")).output == tmp_path.as_uri()
        folders.append(tmp_path / "more")
        await client.notify_roots_changed()
        listed = (await call(tools, "mcp__feat__roots")).output
    assert listed == f"{tmp_path.as_uri()} {(tmp_path / 'more').as_uri()}"


async def test_log_messages_become_records_events_and_handler_calls(
    caplog: pytest.LogCaptureFixture,
) -> None:
    got: list[MCPLogRecord] = []

    async def on_log(record: MCPLogRecord) -> None:
        got.append(record)

    caplog.set_level(logging.INFO, logger="tether.mcp.server")
    client = MCPClient("feat", True, features_stdio(), on_log=on_log, log_level="info")
    async with client:
        recorder = Recorder()
        await call(await tools_of(client), "mcp__feat__chatty", recorder.context)
    assert [(r.level, r.data) for r in got] == [("info", "visible message")]  # no debug
    assert [e.data["data"] for e in recorder.events if e.name == "mcp_log"] == ["visible message"]
    assert "visible message" in caplog.text


async def test_resources_through_the_api_and_the_two_tools() -> None:
    async with MCPClient("feat", True, features_stdio(), resource_tools=True) as client:
        listed = await client.list_resources()
        assert {r["uri"] for r in listed} == {"note://greeting", "note://binary"}
        assert (await client.read_resource("note://binary"))[0]["blob"] == "AAEC"
        tools = await tools_of(client)
        assert tools["mcp__feat__read_resource"].is_read_only
        text = await call(tools, "mcp__feat__read_resource", uri="note://greeting")
        names = await call(tools, "mcp__feat__list_resources")
    assert text == "Hello from a resource."
    assert "note://greeting" in names


async def test_no_resource_tools_unless_asked() -> None:
    async with MCPClient("feat", True, features_stdio()) as client:
        assert "mcp__feat__read_resource" not in await tools_of(client)


async def test_prompts_and_completion() -> None:
    async with MCPClient("feat", False, features_stdio()) as client:
        prompts = await client.list_prompts()
        messages = await client.get_prompt("review", {"language": "rust"})
        done = await client.complete_argument("review", "language", "p")
    assert [p["name"] for p in prompts] == ["review"]
    assert messages[0]["content"]["text"] == "Review this rust code for bugs."
    assert done == ["python", "perl"]


async def test_model_sampler_asks_then_answers_with_the_model() -> None:
    from tether.mcp import ModelSampler
    from tether.message import AssistantMsg
    from tether.model import ScriptedChatModel

    model = ScriptedChatModel([AssistantMsg("assistant", "forty-two")])
    asked: list[str] = []

    async def approve(request: SamplingRequest) -> bool:
        asked.append(request.text)
        return len(asked) == 1  # yes once, then no

    sampler = ModelSampler(model, approve)
    async with MCPClient("feat", True, features_stdio(), on_sampling=sampler) as client:
        tools = await tools_of(client)
        yes = await call(tools, "mcp__feat__sample", question="6*7?")
        no = await call(tools, "mcp__feat__sample", question="again?")
    assert yes.output == "model said: forty-two"
    assert no.state == ToolResultState.ERROR
    assert asked == ["user: 6*7?", "user: again?"] and sampler.answered == 1
    model.assert_complete()
    assert model.calls[0].messages[-1].get_text_content() == "6*7?"


async def test_model_sampler_refuses_without_approval_or_past_its_limit() -> None:
    from tether.mcp import ModelSampler
    from tether.model import ScriptedChatModel

    request = SamplingRequest(server="s", messages=[], system_prompt=None, max_tokens=5)
    assert await ModelSampler(ScriptedChatModel([]))(request) is None

    async def yes(request: SamplingRequest) -> bool:
        return True

    assert await ModelSampler(ScriptedChatModel([]), yes, max_requests=0)(request) is None


async def test_model_sampler_stops_once_its_token_budget_is_spent() -> None:
    from tether.mcp import ModelSampler
    from tether.message import AssistantMsg, ChatUsage
    from tether.model import ScriptedChatModel

    answer = AssistantMsg("assistant", "ok")
    answer.usage = ChatUsage(input_tokens=30, output_tokens=20)
    model = ScriptedChatModel([answer, AssistantMsg("assistant", "never")])

    async def yes(request: SamplingRequest) -> bool:
        return True

    sampler = ModelSampler(model, yes, max_tokens=50)
    request = SamplingRequest(server="s", messages=[], system_prompt=None, max_tokens=5)
    first = await sampler(request)
    assert first is not None and first.text == "ok" and sampler.tokens == 50
    assert await sampler(request) is None  # the budget is spent
