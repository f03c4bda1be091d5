"""`.mcp.json` with a real stdio MCP server (`mcp-server-time`): listed in /mcp, callable."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

TIME_SERVER = shutil.which("mcp-server-time") or str(
    Path(sys.executable).parent / "mcp-server-time"
)


@pytest.fixture
def mcp_json(project: Path) -> None:
    if not Path(TIME_SERVER).exists():
        pytest.fail("mcp-server-time is a dev dependency; pip install -e '.[dev]'")
    servers = {
        "time": {
            "command": TIME_SERVER,
            "args": ["--local-timezone", "UTC"],
            "trust_annotations": True,
        }
    }
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))


def test_mcp_tools_listed_and_called(terminal, script, mcp_json) -> None:
    model = script(
        [
            {
                "tool_calls": [
                    {"name": "mcp__time__get_current_time", "input": {"timezone": "Asia/Tokyo"}}
                ]
            },
            {"text": "That is the time in Tokyo."},
        ]
    )
    term = terminal("--model", model, "--trust-folder")
    term.prompt_ready(1)
    term.type("/mcp")
    term.wait_for(r"time: connected, 2 tools")
    screen = term.wait_for(
        r"mcp__time__get_current_time\n  mcp__time__convert_time|mcp__time__convert_time\n  mcp__time__get_current_time"
    )
    term.prompt_ready(2)
    term.type("what time is it in Tokyo?")
    screen = term.wait_for("That is the time in Tokyo.")  # trusted read-only: no question
    assert "Allow" not in screen
    assert '● mcp__time__get_current_time({"timezone": "Asia/Tokyo"})' in screen
    assert '⎿ success { "timezone": "Asia/Tokyo", "datetime": "' in screen
    assert term.leave() == 0


def test_untrusted_server_asks_before_its_read_only_tool(terminal, script, project) -> None:
    servers = {"time": {"command": TIME_SERVER, "args": ["--local-timezone", "UTC"]}}
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}))
    model = script(
        [
            {
                "tool_calls": [
                    {"name": "mcp__time__get_current_time", "input": {"timezone": "Asia/Tokyo"}}
                ]
            },
            {"text": "That is the time in Tokyo."},
        ]
    )
    term = terminal("--model", model, "--trust-folder")
    term.prompt_ready(1)
    term.type("what time is it in Tokyo?")
    term.wait_for(r"Allow mcp__time__get_current_time")  # its readOnlyHint is not trusted
    term.key("y")
    screen = term.wait_for("That is the time in Tokyo.")
    assert '⎿ success { "timezone": "Asia/Tokyo", "datetime": "' in screen
    assert term.leave() == 0
