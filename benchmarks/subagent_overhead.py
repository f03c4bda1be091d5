"""Sub-agent overhead: a reply that delegates once, against a plain reply of as many model calls.

Delegating reply (4 model calls): the parent calls its sub-agent; the sub-agent calls
`echo` once, then answers; the parent answers. Plain reply (4 model calls): one agent
calls `echo` three times in three steps, then answers. Both with a zero-latency model,
measured in the same run (wall time per reply, median of rounds), without a checkpoint
and with one that serialises the whole state at every save point. Target: ratio <= 2.2.

State bytes: the bytes a paused sub-agent adds to its parent's stored state, against the
same child state stored alone. Target: <= 1.1.

    python benchmarks/subagent_overhead.py [--replies N] [--rounds R]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections.abc import AsyncIterator
from typing import Any

from tether.agent import Agent
from tether.message import ToolResultBlock, UserMsg
from tether.model import ChatModelBase, ChatRequest, ModelDelta, TextDelta, ToolCallDelta
from tether.state import AgentState
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
async def echo(text: str) -> str:
    """Echo the text."""
    return text


@tool(requires_confirmation=True)
async def publish(text: str) -> str:
    """Publish (asks first)."""
    return text


class Steps(ChatModelBase):
    """Calls `tool` with `args` until it has `calls` results in the reply, then answers.

    With `then`, the call after those is to the tool `then` (same arguments).
    """

    def __init__(
        self, name: str, tool_name: str, args: str, calls: int, then: str | None = None
    ) -> None:
        super().__init__(name)
        self.tool_name, self.args, self.calls, self.then = tool_name, args, calls, then

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        last = request.messages[-1]
        done = sum(isinstance(b, ToolResultBlock) for b in last.content)
        if last.role != "assistant":
            done = 0
        name = self.tool_name
        if done >= self.calls:
            if self.then is None or done > self.calls:
                yield TextDelta(text="done")
                return
            name = self.then
        yield ToolCallDelta(index=0, id=f"c{done}", name=name, arguments=self.args)


def plain() -> Agent:
    model = Steps("plain", "echo", '{"text": "hi"}', 3)
    return Agent("plain", "You are fast.", model, Toolkit(tools=[echo]))


def delegating() -> Agent:
    child = Agent("helper", "You help.", Steps("child", "echo", '{"text": "hi"}', 1),
                  Toolkit(tools=[echo]))  # fmt: skip
    model = Steps("parent", "helper", '{"task": "say hi"}', 1)
    return Agent("parent", "You lead.", model, Toolkit(tools=[child.as_tool()]))


async def saving(state: AgentState) -> None:
    state.model_dump_json()


async def per_reply_us(agent: Agent, replies: int, checkpoint: Any) -> float:
    start = time.perf_counter()
    for _ in range(replies):
        agent.state = AgentState()
        await agent.reply(UserMsg("user", "go"), checkpoint=checkpoint)
    return (time.perf_counter() - start) / replies * 1e6


async def state_bytes() -> tuple[int, int]:
    """(bytes the nested child adds to the parent's JSON, the child's JSON stored alone).

    The child did four tool steps, then paused on a confirmation.
    """
    text = json.dumps({"text": "a paragraph of findings the child worked on " * 4})
    child = Agent("writer", "You write.", Steps("w", "echo", text, 4, then="publish"),
                  Toolkit(tools=[echo, publish]))  # fmt: skip
    parent = Agent("boss", "You lead.", Steps("b", "writer", '{"task": "w"}', 1),
                   Toolkit(tools=[child.as_tool()]))  # fmt: skip
    msg = await parent.reply(UserMsg("user", "go"))
    assert msg.metadata.get("awaiting"), "the child should have paused"
    whole = parent.state.model_dump_json()
    record = parent.state.tool_state["writer"]
    alone = AgentState.model_validate(next(iter(record.values()))["state"]).model_dump_json()
    without = parent.state.model_copy(update={"tool_state": {}}).model_dump_json()
    return len(whole) - len(without), len(alone)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--replies", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    rows = []
    for label, checkpoint in (("no checkpoint", None), ("checkpoint (JSON)", saving)):
        a, b = plain(), delegating()
        await per_reply_us(a, 20, checkpoint)  # warm up
        await per_reply_us(b, 20, checkpoint)
        plain_us, nested_us = [], []
        for _ in range(args.rounds):
            plain_us.append(await per_reply_us(a, args.replies, checkpoint))
            nested_us.append(await per_reply_us(b, args.replies, checkpoint))
        p, n = statistics.median(plain_us), statistics.median(nested_us)
        rows.append((label, p, n, n / p))
    print(f"{'':20} {'plain µs':>10} {'delegating µs':>14} {'ratio':>7}  (target <= 2.2)")
    for label, p, n, ratio in rows:
        print(f"{label:20} {p:10.0f} {n:14.0f} {ratio:7.2f}")
    added, alone = await state_bytes()
    print(f"\nnested child state: {added} bytes in the parent, {alone} stored alone: "
          f"ratio {added / alone:.3f} (target <= 1.1)")  # fmt: skip
    worst = max(r[3] for r in rows)
    print(json.dumps({"worst_ratio": round(worst, 3), "bytes_ratio": round(added / alone, 3)}))
    if worst > 2.2 or added / alone > 1.1:
        raise SystemExit("over target")


if __name__ == "__main__":
    asyncio.run(main())
