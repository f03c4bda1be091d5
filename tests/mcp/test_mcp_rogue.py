"""Servers that misbehave on the wire: silence, unreadable answers, wrong ids, noise, media.

Each call must end with a result the model reads, at once where the client can tell
(only silence waits for `execution_timeout`), and the session must stay usable.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from mcp_testkit import call, tools_of

from tether.mcp import MCPClient, StdioMCPConfig
from tether.mcp._frames import guarding, unguard
from tether.mcp._stderr import LINE_CHARS, LOG_BYTES
from tether.message import DataBlock, TextBlock, ToolResultState

ROGUE = Path(__file__).parent / "servers" / "rogue_server.py"


def rogue(**kwargs: Any) -> MCPClient:
    config = StdioMCPConfig(command=sys.executable, args=[str(ROGUE)])
    return MCPClient("rogue", True, config, **kwargs)


def test_the_default_execution_timeout_is_finite() -> None:
    assert rogue().execution_timeout == 60


async def test_a_server_that_never_answers_ends_the_call_with_an_error() -> None:
    async with rogue(execution_timeout=0.5) as client:
        tools = await tools_of(client)
        hung = await call(tools, "mcp__rogue__silent")
        assert hung.state is ToolResultState.ERROR and "within 0.5s" in hung.output
        assert (await call(tools, "mcp__rogue__echo", text="on")).output == "echo: on"


@pytest.mark.parametrize("is_stateful", [True, False])
@pytest.mark.parametrize(
    ("tool", "says"),
    [("surrogate", "could not be read"), ("wrong_id", "never sent")],
)
async def test_an_answer_that_cannot_be_read_or_matched_fails_the_call_at_once(
    tool: str, says: str, is_stateful: bool
) -> None:
    config = StdioMCPConfig(command=sys.executable, args=[str(ROGUE)])
    async with MCPClient("rogue", is_stateful, config, execution_timeout=120) as client:
        tools = await tools_of(client)
        started = time.monotonic()
        result = await call(tools, f"mcp__rogue__{tool}")
        assert time.monotonic() - started < 30  # not after the 120 s timeout
        assert result.state is ToolResultState.ERROR
        assert says in result.get_text() and "'rogue'" in result.get_text()
        assert (await call(tools, "mcp__rogue__echo", text="on")).output == "echo: on"


async def test_an_unreadable_answer_fails_only_its_own_call_a_stray_id_fails_all() -> None:
    async with rogue(execution_timeout=2) as client:
        tools = await tools_of(client)
        silent, broken = await asyncio.gather(
            call(tools, "mcp__rogue__silent"), call(tools, "mcp__rogue__surrogate")
        )
        assert "could not be read" in broken.get_text()
        assert "within 2s" in silent.get_text()  # its own answer may still come: it waits
        silent, stray = await asyncio.gather(
            call(tools, "mcp__rogue__silent"), call(tools, "mcp__rogue__wrong_id")
        )
        # Both at once (not "did not finish within"): which call the answer was for is unknown.
        assert "never sent" in stray.get_text() and "never sent" in silent.get_text()


async def test_stdout_noise_is_logged_within_the_budget(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    lines, width = 20_000, 250  # 5 MB of non-JSON lines
    async with rogue(execution_timeout=120) as client:
        tools = await tools_of(client)
        result = await call(tools, "mcp__rogue__noise", lines=lines, width=width)
    assert result.output == "after the noise"
    logged = sum(len(caplog.handler.format(r)) for r in caplog.records)
    assert logged < 2 * LOG_BYTES  # the lines, one notice, and nothing else of size
    noise = [r for r in caplog.records if r.name == "tether.mcp.stdout"]
    assert noise and all(len(r.getMessage()) < LINE_CHARS + 100 for r in noise)
    assert not [r for r in caplog.records if r.exc_info]  # no tracebacks


async def test_media_of_a_type_providers_reject_or_not_base64_becomes_a_note() -> None:
    async with rogue() as client:
        result = await call(await tools_of(client), "mcp__rogue__bad_media")
    blocks = result.output
    assert isinstance(blocks, list)
    notes = [b.text for b in blocks if isinstance(b, TextBlock)]
    data = [b for b in blocks if isinstance(b, DataBlock)]
    assert len(notes) == 3 and len(data) == 1
    assert "text/html" in notes[0] and "not sent" in notes[0]
    assert "audio/x-unheard-of" in notes[1]
    assert "base64" in notes[2]
    assert data[0].source.media_type == "image/png"


def test_the_sdk_parse_log_is_dropped_only_inside_guarded_sessions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    sdk = logging.getLogger("mcp.client.stdio")
    with caplog.at_level(logging.ERROR, logger="mcp.client.stdio"):
        token = guarding()
        sdk.error("Failed to parse JSONRPC message from server")  # ours: the guard reports it
        unguard(token)
        sdk.error("Failed to parse JSONRPC message from server")  # someone else's session
    assert len([r for r in caplog.records if r.name == "mcp.client.stdio"]) == 1
