"""Alibaba Cloud DashScope (Qwen), the model of tether's specification samples.

`DashScopeChatModel` speaks DashScope's native protocol; `thinking=True` sets
`enable_thinking` and the reasoning streams as thinking blocks.

Environment: `DASHSCOPE_API_KEY`, `DASHSCOPE_BASE_URL` (optional, e.g. the international
endpoint), `DASHSCOPE_MODEL` (default `qwen-max`).
Quirks: no `required` tool choice and no forced call while thinking: tether sends
`auto` plus a reminder.

Install: `pip install 'tether[dashscope]'`. Run it: `python examples/providers/dashscope_example.py`
(it streams the answer and calls one tool; the file is not named after the SDK, which it
would shadow). The tests run it against a local server that
speaks the DashScope wire format, by pointing `DASHSCOPE_BASE_URL` at it.
"""

import asyncio
import os
import sys

from tether.agent import Agent
from tether.errors import ModelAuthenticationError
from tether.event import TextBlockDeltaEvent, ToolCallEndEvent
from tether.message import UserMsg
from tether.model import DashScopeChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny and 21°C in {city}"


async def main() -> int:
    model = DashScopeChatModel(model=os.environ.get("DASHSCOPE_MODEL", "qwen-max"))
    agent = Agent(
        name="assistant",
        system_prompt="You are brief. Use the tools when they help.",
        model=model,
        toolkit=Toolkit(tools=[get_weather]),
    )
    try:
        async for event in agent.reply_stream(UserMsg("user", "What is the weather in Paris?")):
            if isinstance(event, TextBlockDeltaEvent):
                print(event.delta, end="", flush=True)
            elif isinstance(event, ToolCallEndEvent):
                print(f"[calling {event.tool_call.name}({event.tool_call.input})]")
    except ModelAuthenticationError as error:
        print(error, file=sys.stderr)  # says which environment variable to set
        return 1
    finally:
        await model.aclose()
    print()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
