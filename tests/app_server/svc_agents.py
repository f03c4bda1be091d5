"""Agents the service tests serve (also imported by `tether serve --agents svc_agents:agents`).

The model plays a plan written in the user message as JSON: a list of rounds, each a list
of `[tool, arguments]` calls, a final text, or `"!error"` (the provider fails). Any other
message gets `echo: <text>`. A final text `"!think <thought>|<text>"` thinks first (and reports 10 input, 5 output tokens). Tools record every run in `$TETHER_TEST_DIR/runs.log`;
`gate` waits until the file `$TETHER_TEST_DIR/<name>` exists.
"""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

from tether.agent import Agent
from tether.errors import ModelResponseError
from tether.message import ChatUsage, ToolCallBlock
from tether.model import (
    ChatModelBase,
    ChatRequest,
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)
from tether.tool import Toolkit, tool


def _dir() -> Path:
    return Path(os.environ.get("TETHER_TEST_DIR", "."))


def _record(line: str) -> None:
    with open(_dir() / "runs.log", "a") as f:
        f.write(line + "\n")


class PlanModel(ChatModelBase):
    """Plays the JSON plan of the last user message (see the module docstring)."""

    def __init__(self, latency: float = 0.0) -> None:
        super().__init__("plan", context_length=128_000)
        self.latency = latency

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        """Answer with the next round of the plan."""
        if self.latency:
            await asyncio.sleep(self.latency)
        user_at = max(i for i, m in enumerate(request.messages) if m.role == "user")
        text = request.messages[user_at].get_text_content() or ""
        after = request.messages[user_at + 1 :]
        done = sum(len(m.get_content_blocks(ToolCallBlock)) for m in after)
        try:
            plan = json.loads(text)
        except ValueError:
            plan = None
        if not isinstance(plan, list):
            for word in f"echo: {text}".split(" "):
                yield TextDelta(text=word + " ")
            yield UsageDelta(usage=ChatUsage(input_tokens=10, output_tokens=5))
            return
        index, seen = 0, 0
        while index < len(plan) and isinstance(plan[index], list) and seen < done:
            seen += len(plan[index])
            index += 1
        step = plan[index] if index < len(plan) else "plan done"
        if step == "!error":
            raise ModelResponseError("the provider refused the request (test)", status_code=400)
        if isinstance(step, str) and step.startswith("!think "):
            thought, _, step = step.removeprefix("!think ").partition("|")
            yield ThinkingDelta(text=thought)
        if isinstance(step, str):
            for word in step.split(" "):
                yield TextDelta(text=word + " ")
            return
        for i, (name, args) in enumerate(step):
            call_id = f"call_{uuid.uuid4().hex[:10]}"
            yield ToolCallDelta(index=i, id=call_id, name=name, arguments=json.dumps(args))


@tool(requires_confirmation=True)
def save_note(name: str, text: str) -> str:
    """Save a note (asks first)."""
    _record(f"save_note {name}")
    return f"saved {name}"


@tool(is_external_tool=True)
def lookup(query: str) -> str:
    """Look something up (the client runs it)."""
    raise NotImplementedError  # pragma: no cover


@tool(is_read_only=True, is_concurrency_safe=True)
def tick(n: int) -> str:
    """Record a step."""
    _record(f"tick {n}")
    return f"tick {n}"


@tool(is_read_only=True)
async def gate(name: str) -> str:
    """Wait until the test opens the gate `name` (a file)."""
    _record(f"gate {name} start")
    path = _dir() / name
    while not path.exists():
        await asyncio.sleep(0.01)
    _record(f"gate {name} end")
    return f"gate {name} open"


def make_agent(latency: float = 0.0) -> Agent:
    """The test agent."""
    return Agent(
        name="planner",
        system_prompt="You follow the plan.\nTest agent.",
        model=PlanModel(latency),
        toolkit=Toolkit(tools=[save_note, lookup, tick, gate]),
    )


def agents() -> dict[str, Agent]:
    """`--agents svc_agents:agents`: a callable, as `tether serve` accepts."""
    return {"planner": make_agent(float(os.environ.get("TETHER_TEST_LATENCY", "0")))}
