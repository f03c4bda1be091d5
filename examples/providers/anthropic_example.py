"""Anthropic Claude through the Messages API.

`AnthropicChatModel` streams by default; `thinking=True` (or a token budget) turns on
extended thinking, whose signed blocks are sent back as the API requires.

Environment: `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL` (optional), `ANTHROPIC_MODEL` (default
`claude-sonnet-4-5`).
Quirks: the API refuses a forced tool call while thinking, so such a request is sent
with `tool_choice=auto` and a reminder.

Install: `pip install 'tether[anthropic]'`. Run it: `python examples/providers/anthropic_example.py`
(it streams the answer and calls one tool; the file is not named after the SDK, which it
would shadow). The tests run it against a local server that
speaks the Anthropic wire format, by pointing `ANTHROPIC_BASE_URL` at it.
"""

import asyncio
import os
import sys

from tether.agent import Agent
from tether.errors import ModelAuthenticationError
from tether.event import TextBlockDeltaEvent, ToolCallEndEvent
from tether.message import UserMsg
from tether.model import AnthropicChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny and 21°C in {city}"


async def main() -> int:
    model = AnthropicChatModel(model=os.environ.get("ANTHROPIC_MODEL", "claude-sonnet-4-5"))
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
