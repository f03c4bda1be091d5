"""A parent and its sub-agents with deterministic models, for the sub-agent tests.

Each model decides from the request alone (so a fresh process picks up where another
stopped): on a step whose last message holds no tool result it calls its tools; once
they are answered it gives its final text. Tools append `start <tool> <call id>` to a log
file (fsync) before they act, so a test counts how often each ran, across processes.

    python subagent_team.py CONFIG_JSON     (a worker: see `main`)
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from collections.abc import AsyncIterator
from typing import Any

from tether.agent import Agent
from tether.message import ChatUsage, ToolCallBlock, ToolResultBlock
from tether.model import ChatModelBase, ChatRequest, ModelDelta, TextDelta, ToolCallDelta, UsageDelta
from tether.tool import ToolContext, Toolkit, tool

LOG: dict[str, str] = {"path": ""}


def log(line: str) -> None:
    if not LOG["path"]:
        return
    with open(LOG["path"], "a") as f:
        f.write(line + "\n")
        f.flush()
        os.fsync(f.fileno())


class RuleModel(ChatModelBase):
    """First step: `calls` (name, JSON input) with ids `<prefix><n>`; then `final`."""

    def __init__(self, name: str, calls: list[tuple[str, str]], final: str) -> None:
        super().__init__(name)
        self.calls, self.final, self.requests = calls, final, 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        self.requests += 1
        last = request.messages[-1]
        yield UsageDelta(usage=ChatUsage(input_tokens=10, output_tokens=5))
        if not self.calls or any(isinstance(b, ToolResultBlock) for b in last.content):
            yield TextDelta(text=self.final)
            return
        for index, (name, arguments) in enumerate(self.calls):
            call_id = f"{self.model_name}{index}"
            yield ToolCallDelta(index=index, id=call_id, name=name, arguments=arguments)


@tool(is_concurrency_safe=True, is_read_only=True)
async def lookup(item: str, ctx: ToolContext) -> str:
    """Look an item up."""
    log(f"start lookup {ctx.tool_call_id}")
    return f"{item}: 42"


@tool(requires_confirmation=True)
async def publish(text: str, ctx: ToolContext) -> str:
    """Publish a text (asks first)."""
    log(f"start publish {ctx.tool_call_id}")
    return f"published {text!r}"


@tool(is_concurrency_safe=True)
async def note(text: str, ctx: ToolContext) -> str:
    """Write a note (not idempotent)."""
    log(f"start note {ctx.tool_call_id}")
    return "noted"


def researcher() -> Agent:
    model = RuleModel("res", [("lookup", '{"item": "tides"}'), ("note", '{"text": "t"}')], "tides are 42")
    return Agent("researcher", "You research.", model, Toolkit(tools=[lookup, note]))


def writer() -> Agent:
    model = RuleModel("wri", [("publish", '{"text": "draft"}')], "draft published")
    return Agent("writer", "You write.", model, Toolkit(tools=[publish]))


def parent(*children: Agent) -> Agent:
    """The parent: one step calling each child, then a final answer."""
    kids = children or (researcher(), writer())
    calls = [(kid.name, json.dumps({"task": f"do {kid.name} work"})) for kid in kids]
    model = RuleModel("boss", calls, "all done")
    return Agent("boss", "You lead.", model, Toolkit(tools=[kid.as_tool() for kid in kids]))


def grand_team() -> Agent:
    """boss → editor → writer (the writer asks): a depth-2 pause."""
    editor_model = RuleModel("edi", [("writer", '{"task": "write it"}')], "edited")
    editor = Agent("editor", "You edit.", editor_model, Toolkit(tools=[writer().as_tool()]))
    return parent(editor)


TEAMS = {"pair": parent, "grand": grand_team}


async def main(config: dict[str, Any]) -> None:
    """Load a state, answer the pause (confirm every call), run to the end, save."""
    from tether.event import ConfirmResult, UserConfirmResultEvent
    from tether.state import AgentState

    LOG["path"] = config["log"]
    with open(config["state"]) as f:
        state = AgentState.model_validate_json(f.read())
    agent = TEAMS[config["team"]]()
    agent.state = state
    pause = json.loads(config["pause"])
    calls = [ToolCallBlock.model_validate(c) for c in pause["tool_calls"]]
    event = UserConfirmResultEvent(
        reply_id=pause["reply_id"],
        confirm_results=[ConfirmResult(confirmed=True, tool_call=c) for c in calls],
    )
    saves = 0

    async def checkpoint(saved: AgentState) -> None:
        nonlocal saves
        saves += 1
        with open(config["state"], "w") as f:
            f.write(saved.model_dump_json())
        if config.get("kill_save") == saves:
            os.kill(os.getpid(), signal.SIGKILL)

    final = await agent.reply(event, checkpoint=checkpoint)
    print(json.dumps({"text": final.get_text_content(), "usage": state.usage.model_dump()}))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
