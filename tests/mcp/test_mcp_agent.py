"""Scripted agents calling real MCP servers through `reply_stream`.

`mcp-server-time` and `mcp-server-git` (published on PyPI) over stdio, and the demo
server for progress events, a server killed mid-reply, and the plugin wrapper.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from mcp_testkit import demo_stdio

from tether.agent import Agent
from tether.event import (
    ConfirmResult,
    CustomEvent,
    EventType,
    RequireUserConfirmEvent,
    ToolResultEndEvent,
    UserConfirmResultEvent,
)
from tether.mcp import MCPClient, StdioMCPConfig
from tether.message import AssistantMsg, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.testing import reply_events, tool_results
from tether.tool import Toolkit

tc = ScriptedChatModel.tool_call


async def watched(agent: Agent, inputs: Any, on_event: Any) -> list[Any]:
    """The reply's events, each shown to `on_event` as it comes (to act mid-stream)."""
    events = []
    async for event in agent.reply_stream(inputs):
        events.append(event)
        on_event(event)
    return events


def results(events: list[Any]) -> dict[str, Any]:
    return {r.id: r for r in tool_results(events)}


async def test_time_server_tools_through_reply_stream() -> None:
    time_server = StdioMCPConfig(command=sys.executable, args=["-m", "mcp_server_time"])
    client = MCPClient("time", True, time_server, trust_annotations=True)
    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [
                    tc("mcp__time__get_current_time", {"timezone": "UTC"}, id="now"),
                    tc(
                        "mcp__time__convert_time",
                        {
                            "source_timezone": "UTC",
                            "time": "12:00",
                            "target_timezone": "Asia/Tokyo",
                        },
                        id="conv",
                    ),
                ],
            ),
            AssistantMsg("a", "It is 21:00 in Tokyo."),
        ]
    )
    async with Toolkit(mcps=[client]) as toolkit:
        agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
        events = await reply_events(agent, UserMsg("user", "time?"))
    assert events[-1].type is EventType.REPLY_END
    got = results(events)
    assert got["now"].state is ToolResultState.SUCCESS and '"timezone": "UTC"' in got["now"].output
    assert got["conv"].state is ToolResultState.SUCCESS and "21:00" in got["conv"].output
    offered = {t["name"]: t for t in model.calls[0].tools}
    assert "timezone" in offered["mcp__time__get_current_time"]["parameters"]["properties"]
    model.assert_complete()


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@x",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@x",
    }
    (repo / "a.txt").write_text("one\n")
    for cmd in (["init", "-q"], ["add", "a.txt"], ["commit", "-qm", "first"]):
        subprocess.run(["git", *cmd], cwd=repo, check=True, env=env)
    (repo / "a.txt").write_text("two\n")
    return repo


async def test_git_server_read_only_runs_and_a_write_pauses_for_confirmation(
    tmp_path: Path,
) -> None:
    repo = _repo(tmp_path)
    git = StdioMCPConfig(command=sys.executable, args=["-m", "mcp_server_git", "-r", str(repo)])
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("mcp__git__git_status", {"repo_path": str(repo)}, id="st")]),
            AssistantMsg(
                "a",
                [tc("mcp__git__git_add", {"repo_path": str(repo), "files": ["a.txt"]}, id="add")],
            ),
            AssistantMsg("a", [tc("mcp__git__git_diff_staged", {"repo_path": str(repo)}, id="df")]),
            AssistantMsg("a", "Staged."),
        ]
    )
    async with Toolkit(mcps=[MCPClient("git", True, git, trust_annotations=True)]) as toolkit:
        agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
        first = await reply_events(agent, UserMsg("user", "stage my change"))
        pause = first[-1]
        assert isinstance(pause, RequireUserConfirmEvent)
        assert results(first)["st"].state is ToolResultState.SUCCESS
        assert "a.txt" in results(first)["st"].output
        asked = pause.tool_calls[0]
        assert asked.name == "mcp__git__git_add"
        assert [str(r) for r in asked.suggested_rules] == ["mcp__git__git_add"]
        confirm = UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=asked)],
        )
        second = await reply_events(agent, confirm)
    assert second[-1].type is EventType.REPLY_END
    got = results(second)
    assert got["add"].state is ToolResultState.SUCCESS
    assert "+two" in got["df"].output
    model.assert_complete()


async def test_progress_events_and_a_server_killed_mid_reply_do_not_hang() -> None:
    client = MCPClient("demo", True, demo_stdio(), execution_timeout=60, trust_annotations=True)
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("mcp__demo__pid", id="pid")]),
            AssistantMsg("a", [tc("mcp__demo__slow", {"steps": 2}, id="slow")]),
            # Two read-only calls form one concurrent batch, whose events stream live.
            AssistantMsg(
                "a",
                [
                    tc("mcp__demo__slow", {"steps": 100000}, id="endless"),
                    tc("mcp__demo__echo", {"text": "side"}, id="side"),
                ],
            ),
            AssistantMsg("a", [tc("mcp__demo__echo", {"text": "again"}, id="again")]),
            AssistantMsg("a", "done"),
        ]
    )
    pid: list[int] = []
    killed_at: list[float] = []
    ended_at: list[float] = []

    def watch(event: Any) -> None:
        if isinstance(event, ToolResultEndEvent) and event.block_id == "pid":
            pid.append(int(event.tool_result.get_text()))
        if isinstance(event, CustomEvent) and event.data["tool_call_id"] == "endless":
            if not killed_at:
                os.kill(pid[0], signal.SIGKILL)
                killed_at.append(time.monotonic())
        if isinstance(event, ToolResultEndEvent) and event.block_id == "endless":
            ended_at.append(time.monotonic())

    async with Toolkit(mcps=[client]) as toolkit:
        agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
        events = await watched(agent, UserMsg("user", "go"), watch)
    assert ended_at[0] - killed_at[0] < 10  # at once, not after the 60s execution_timeout
    progress = [
        e for e in events if isinstance(e, CustomEvent) and e.data["tool_call_id"] == "slow"
    ]
    assert [e.data["progress"] for e in progress] == [1, 2]
    got = results(events)
    assert got["endless"].state is ToolResultState.ERROR
    assert "lost during the call" in got["endless"].output
    assert got["again"].output == "echo: again"  # reconnected
    assert events[-1].type is EventType.REPLY_END
    model.assert_complete()


async def test_an_mcp_server_wrapped_as_a_sleeping_plugin() -> None:
    client = MCPClient("demo", True, demo_stdio(), trust_annotations=True)
    plugin = client.as_plugin(description="Demo tools: echo and notes.")
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [tc("mcp__demo__echo", {"text": "early"}, id="early")]),
            AssistantMsg("a", [tc("activate_plugin", {"module_name": "demo"}, id="wake")]),
            AssistantMsg("a", [tc("mcp__demo__echo", {"text": "awake"}, id="late")]),
            AssistantMsg("a", "done"),
        ]
    )
    async with Toolkit(plugins=[plugin]) as toolkit:
        agent = Agent(name="bot", system_prompt="p", model=model, toolkit=toolkit)
        events = await reply_events(agent, UserMsg("user", "go"))
    got = results(events)
    assert got["early"].state is ToolResultState.ERROR and "activate_plugin" in got["early"].output
    assert got["late"].output == "echo: awake"
    asleep = {t["name"] for t in model.calls[0].tools}
    awake = {t["name"] for t in model.calls[2].tools}
    assert not any(n.startswith("mcp__demo__") for n in asleep)
    assert "mcp__demo__echo" in awake
    assert "Demo tools" in (model.calls[0].messages[0].get_text_content() or "")
    model.assert_complete()
