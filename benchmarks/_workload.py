"""The reply workload of `loop_overhead.py` and `loop_instructions.py`: one place.

A zero-latency model returns two tool calls (`add`, `echo`), then, once their results are
in, a final text. It uses only API the issue-14 base (`fc2b7d3`) already had, so
`loop_instructions.py` can run it against older trees.
"""

from __future__ import annotations

from typing import Any

from tether.model import ChatModelBase, ChatRequest, TextDelta, ToolCallDelta
from tether.tool import Toolkit, tool


@tool
async def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


@tool
async def echo(text: str) -> str:
    """Echo the text back."""
    return text


_CALLS = [
    ToolCallDelta(index=0, id="c1", name="add", arguments='{"a": 1, "b": 2}'),
    ToolCallDelta(index=1, id="c2", name="echo", arguments='{"text": "hi"}'),
]
_FINAL = [TextDelta(text="The sum is 3 and the echo is hi.")]


class LoopModel(ChatModelBase):
    """Zero-latency model: tool calls on odd calls, final text on even ones."""

    def __init__(self) -> None:
        super().__init__("bench", context_length=10_000_000)

    async def stream(self, request: ChatRequest) -> Any:
        last = request.messages[-1]
        answered = last.role == "assistant" and any(b.type == "tool_result" for b in last.content)
        for delta in _FINAL if answered else _CALLS:
            yield delta


def toolkit() -> Toolkit:
    """A fresh toolkit with the workload's two tools."""
    return Toolkit(tools=[add, echo])
