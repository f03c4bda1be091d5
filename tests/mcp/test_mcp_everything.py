"""Against the protocol's reference everything-server (npm, run by Node 22): elicitation,
sampling under an approval, roots, logging, resources through the tools, prompts and
completion. Skipped without it (`tests/conformance/run.sh` installs it); required when
`TETHER_REQUIRE_NODE` is set."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from mcp_testkit import call, tools_of

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

BIN = Path(__file__).resolve().parents[2] / ".ci" / ".mcp-conformance" / "node_modules" / ".bin"


def _config() -> StdioMCPConfig:
    server = BIN / "mcp-server-everything"
    if not server.exists():
        if os.environ.get("TETHER_REQUIRE_NODE"):
            pytest.fail("the everything-server is not installed: run tests/conformance/run.sh")
        pytest.skip("the everything-server is not installed (tests/conformance/run.sh)")
    return StdioMCPConfig(
        command=str(BIN / "node"), args=[str(server), "stdio"], env={"PATH": f"{BIN}:/usr/bin:/bin"}
    )


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
