"""A real session for the built-in tools: an `AgentState`, a work dir, `run_tool`."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tether.event import ToolResultEndEvent
from tether.message import ToolCallBlock, ToolResultBlock
from tether.permission import PermissionContext
from tether.state import AgentState
from tether.tool import ToolBase, ToolContext
from tether.tool._runner import run_tool


class Session:
    """One session's state and work dir; runs tools the way the agent loop does."""

    def __init__(self, work: Path) -> None:
        self.work = work
        self.state = AgentState(
            permission_context=PermissionContext(working_directories=[str(work)])
        )
        self.calls = 0

    def context(self, tool: ToolBase) -> ToolContext:
        self.calls += 1
        return ToolContext(
            tool_call_id=f"call-{self.calls}",
            reply_id="reply-1",
            permission_context=self.state.permission_context,
            tool_state=self.state.tool_state_for(tool.name),
            session_state=self.state,
        )

    async def run(self, tool: ToolBase, **arguments: Any) -> ToolResultBlock:
        context = self.context(tool)
        call = ToolCallBlock(id=context.tool_call_id, name=tool.name, input=json.dumps(arguments))
        events = [event async for event in run_tool(tool, call, context, None)]
        end = events[-1]
        assert isinstance(end, ToolResultEndEvent)
        return end.tool_result

    @staticmethod
    def pid_alive(pid: int) -> bool:
        """True if `pid` is a live process (a zombie waiting to be reaped counts as dead)."""
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except (FileNotFoundError, ProcessLookupError):
            return False
        return state not in ("Z", "X")

    @staticmethod
    def set_mtime(path: Path, seconds_ago: float) -> None:
        """Give `path` a modification time `seconds_ago` before now."""
        stamp = time.time() - seconds_ago
        os.utime(path, (stamp, stamp))


def require_bwrap() -> None:
    """Skip (with the reason) unless bubblewrap can run here.

    With `TETHER_REQUIRE_BWRAP=1` the suite's own hook (`tests/conftest.py`) turns a skip
    that blames bubblewrap into a failure.
    """
    from tether.errors import SandboxUnavailableError
    from tether.tool.builtin import BubblewrapSandbox

    try:
        BubblewrapSandbox()
    except SandboxUnavailableError as exc:
        pytest.skip(f"bubblewrap cannot run here: {exc}")


@pytest.fixture
def bwrap_ok() -> None:
    """A test that runs bubblewrap: skipped with the reason when it is absent."""
    require_bwrap()


@pytest.fixture
def session(tmp_path: Path) -> Session:
    work = tmp_path / "work"
    work.mkdir()
    return Session(work)
