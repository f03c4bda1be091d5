"""A streamed reply's events as JSON, with ids and times made comparable across runs."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

from tether.agent import Agent
from tether.message import ChatUsage, UserMsg
from tether.model import (
    ChatModelBase,
    ChatRequest,
    StopDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
)
from tether.tool import Toolkit, tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


class _Model(ChatModelBase):
    """Thinking, text and two tool calls; then thinking and a final text."""

    def __init__(self) -> None:
        super().__init__("sample", context_length=1_000_000)

    async def stream(self, request: ChatRequest) -> Any:
        last = request.messages[-1]
        answered = last.role == "assistant" and any(b.type == "tool_result" for b in last.content)
        if answered:
            deltas: list[Any] = [
                ThinkingDelta(text="done"),
                ThinkingDelta(text="", signature="sig"),
                TextDelta(text="The sum "),
                TextDelta(text="is 3."),
                UsageDelta(usage=ChatUsage(input_tokens=20, output_tokens=5)),
                StopDelta(reason="stop"),
            ]
        else:
            deltas = [
                ThinkingDelta(text="let me "),
                ThinkingDelta(text="add"),
                TextDelta(text="Adding."),
                ToolCallDelta(index=0, id="c1", name="add", arguments='{"a": 1,'),
                ToolCallDelta(index=0, arguments=' "b": 2}'),
                ToolCallDelta(index=1, id="c2", name="add", arguments='{"a": 2, "b": 2}'),
                UsageDelta(usage=ChatUsage(input_tokens=10, output_tokens=7)),
            ]
        for delta in deltas:
            yield delta


_TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(\+00:00|Z)")


def normalised(lines: list[str]) -> list[str]:
    """Each id-like value as its order of appearance, each time as `T`."""
    seen: dict[str, str] = {}

    def ident(match: re.Match[str]) -> str:
        return seen.setdefault(match.group(0), f"ID{len(seen)}")

    out = []
    for line in lines:
        line = _TIME.sub("T", line)
        out.append(re.sub(r"[0-9a-f]{20}", ident, line))
    return out


def events_json() -> list[str]:
    """Class, fields-set and JSON of every event of one streamed reply, normalised."""
    agent = Agent(name="sample", system_prompt="Be brief.", model=_Model(), toolkit=Toolkit([add]))

    async def run() -> list[str]:
        return [
            f"{type(event).__name__} {sorted(event.model_fields_set)} {event.model_dump_json()}"
            async for event in agent.reply_stream(UserMsg("u", "go"))
        ]

    return normalised(asyncio.run(run()))


if __name__ == "__main__":
    print(json.dumps(events_json(), indent=0))
