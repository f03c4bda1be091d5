"""The no-framework floor for `loop_overhead.py`: the same workload written by hand.

Messages are plain dicts, the two tools run under `asyncio.gather`, and the "state" is a
JSON dump of the message list. Nothing here validates, streams, checks permissions or
estimates tokens: it is the cost of the workload itself, which tether's figures are read
against (as ratios measured in the same run).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable
from typing import Any

Message = dict[str, Any]

_CALLS = [
    {"id": "c1", "name": "add", "arguments": '{"a": 1, "b": 2}'},
    {"id": "c2", "name": "echo", "arguments": '{"text": "hi"}'},
]
_FINAL = "The sum is 3 and the echo is hi."


async def _add(a: int, b: int) -> int:
    return a + b


async def _echo(text: str) -> str:
    return text


TOOLS: dict[str, Callable[..., Awaitable[Any]]] = {"add": _add, "echo": _echo}


async def model(messages: list[Message]) -> Message:
    """Zero-latency model: tool calls first, the final text once the results are in."""
    if messages[-1]["role"] == "tool":
        return {"role": "assistant", "content": _FINAL}
    return {"role": "assistant", "content": None, "tool_calls": [dict(c) for c in _CALLS]}


async def reply(messages: list[Message], text: str) -> str:
    """One reply: model call, both tools concurrently, model call with the final text."""
    messages.append({"role": "user", "content": text})
    while True:
        msg = await model(messages)
        messages.append(msg)
        calls = msg.get("tool_calls")
        if not calls:
            return str(msg["content"])
        results = await asyncio.gather(
            *(TOOLS[c["name"]](**json.loads(c["arguments"])) for c in calls)
        )
        for call, result in zip(calls, results, strict=True):
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": str(result)})


def history(n: int) -> list[Message]:
    """`n` prior messages shaped like `loop_overhead.history`."""
    messages: list[Message] = []
    for i in range(n // 2):
        messages.append({"role": "user", "content": f"question {i}: what is {i} + {i}?"})
        messages.append(
            {
                "role": "assistant",
                "content": f"The answer is {2 * i}.",
                "tool_calls": [{"id": f"h{i}", "name": "add", "arguments": '{"a": 1, "b": 2}'}],
            }
        )
    return messages


def dump(messages: list[Message]) -> str:
    """The floor's state: the message list as JSON."""
    return json.dumps(messages)


def load(data: str) -> list[Message]:
    """Read the floor's state back."""
    loaded: list[Message] = json.loads(data)
    return loaded
