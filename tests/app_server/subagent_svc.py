"""The sub-agent team the service tests serve (`tether serve --agents subagent_svc:agents`).

`boss` calls `researcher` and `writer` in one batch. The researcher waits at a gate (the
file `$TETHER_TEST_DIR/mid`) before it answers, so a test can reconnect while a child is
mid-run; the writer's `publish` asks first. Tools record every run in `runs.log`.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

from tether.agent import Agent
from tether.message import ToolResultBlock
from tether.model import ChatModelBase, ChatRequest, ModelDelta, TextDelta, ToolCallDelta
from tether.tool import ToolContext, Toolkit, tool


def _dir() -> Path:
    return Path(os.environ.get("TETHER_TEST_DIR", "."))


def _record(line: str) -> None:
    with open(_dir() / "runs.log", "a") as f:
        f.write(line + "\n")


class StepModel(ChatModelBase):
    """Calls its tools on a reply's first step; answers once they are answered."""

    def __init__(self, name: str, calls: list[tuple[str, str]], final: str) -> None:
        super().__init__(name)
        self.calls, self.final = calls, final

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        if any(isinstance(b, ToolResultBlock) for b in request.messages[-1].content):
            yield TextDelta(text=self.final)
            return
        for i, (name, args) in enumerate(self.calls):
            yield ToolCallDelta(index=i, id=f"{self.model_name}{i}", name=name, arguments=args)


@tool(is_read_only=True, is_concurrency_safe=True)
async def wait_gate(ctx: ToolContext) -> str:
    """Wait until the test opens the gate."""
    _record(f"wait_gate {ctx.tool_call_id} start")
    while not (_dir() / "mid").exists():
        await asyncio.sleep(0.01)
    return "open"


@tool(requires_confirmation=True)
async def publish(text: str, ctx: ToolContext) -> str:
    """Publish a text (asks first)."""
    _record(f"publish {ctx.tool_call_id}")
    return f"published {text}"


def agents() -> dict[str, Agent]:
    """`--agents subagent_svc:agents`."""
    researcher = Agent(
        "researcher", "You research.", StepModel("res", [("wait_gate", "{}")], "found it"),
        Toolkit(tools=[wait_gate]),
    )  # fmt: skip
    writer = Agent(
        "writer", "You write.", StepModel("wri", [("publish", '{"text": "d"}')], "written"),
        Toolkit(tools=[publish]),
    )  # fmt: skip
    task = json.dumps({"task": "help"})
    boss = Agent(
        "boss", "You lead.",
        StepModel("boss", [("researcher", task), ("writer", task)], "all done"),
        Toolkit(tools=[researcher.as_tool(), writer.as_tool()]),
    )  # fmt: skip
    return {"team": boss}
