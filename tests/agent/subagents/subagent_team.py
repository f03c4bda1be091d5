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
from tether.model import (
    ChatModelBase,
    ChatRequest,
    ModelDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
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
    """First step: `calls` (name, JSON input) with ids `<name><n>`; then `final`, followed
    by `[id:state ...]` of the results it saw (so a test reads how each call ended)."""

    def __init__(self, name: str, calls: list[tuple[str, str]], final: str) -> None:
        super().__init__(name)
        self.calls, self.final, self.requests = calls, final, 0

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        self.requests += 1
        last = request.messages[-1]
        yield UsageDelta(usage=ChatUsage(input_tokens=10, output_tokens=5))
        results = [b for b in last.content if isinstance(b, ToolResultBlock)]
        if not self.calls or results:
            seen = " ".join(f"{r.id}:{r.state.value}" for r in results)
            yield TextDelta(text=f"{self.final} [{seen}]" if seen else self.final)
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
    model = RuleModel(
        "res", [("lookup", '{"item": "tides"}'), ("note", '{"text": "t"}')], "tides are 42"
    )
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


def confirm_all(pause_events: list[dict[str, Any]]) -> Any:
    """A `UserConfirmResultEvent` confirming every call of a paused reply's pause events."""
    from tether.event import ConfirmResult, UserConfirmResultEvent

    asking = [e for e in pause_events if e["type"] == "require_user_confirm"]
    calls = [ToolCallBlock.model_validate(c) for e in asking for c in e["tool_calls"]]
    return UserConfirmResultEvent(
        reply_id=asking[0]["reply_id"],
        confirm_results=[ConfirmResult(confirmed=True, tool_call=c) for c in calls],
    )


async def main(config: dict[str, Any]) -> None:
    """Run the team's session in `config["state"]` to its end, confirming every pause.

    Starts a reply if the file is missing, continues one in progress, or sends
    `config["answer"]` (a resume event as JSON) first. With `kill_save`, the process
    SIGKILLs itself at that save point (`kill_when`: "before" or "after" writing it).
    """
    from tether.event import event_adapter
    from tether.message import UserMsg
    from tether.state import AgentState

    LOG["path"] = config["log"]
    path = config["state"]
    agent = TEAMS[config["team"]]()
    inputs: Any
    if os.path.exists(path):
        with open(path) as f:
            agent.state = AgentState.model_validate_json(f.read())
        inputs = None if agent.state.reply is not None else "done"
    else:
        inputs = UserMsg("user", "go")
    if "answer" in config:
        inputs = event_adapter.validate_json(config["answer"])
    saves = 0

    async def checkpoint(saved: AgentState) -> None:
        nonlocal saves
        saves += 1
        if config.get("kill_save") == saves and config.get("kill_when") == "before":
            os.kill(os.getpid(), signal.SIGKILL)
        with open(path + ".tmp", "w") as f:
            f.write(saved.model_dump_json())
        os.replace(path + ".tmp", path)
        log(f"saved {saves}")
        if config.get("kill_save") == saves and config.get("kill_when") != "before":
            os.kill(os.getpid(), signal.SIGKILL)

    text = None
    while inputs != "done":
        final = await agent.reply(inputs, checkpoint=checkpoint)
        if final.metadata.get("awaiting"):
            inputs = confirm_all(final.metadata["pause_events"])
            continue
        text = final.get_text_content()
        break
    print(json.dumps({"text": text, "saves": saves, "usage": agent.state.usage.model_dump()}))


if __name__ == "__main__":
    asyncio.run(main(json.loads(sys.argv[1])))
