"""OpenAI, and any endpoint that speaks the OpenAI chat-completions API.

`OpenAIChatModel` also serves DeepSeek, Moonshot, vLLM, llama.cpp and other compatible
servers: set the base URL. Their `reasoning_content` streams as thinking.

Environment: `OPENAI_API_KEY` (the key), `OPENAI_BASE_URL` (another endpoint; a self-hosted one
may need no key), `OPENAI_MODEL` (default `gpt-4o-mini`).
Quirks: the SDK's own retries are off (tether retries, see `ModelConfig`); reasoning
models take `reasoning_effort=...`.

Install: `pip install 'tether[openai]'`. Run it: `python examples/providers/openai_example.py`
(it streams the answer and calls one tool; the file is not named after the SDK, which it
would shadow). The tests run it against a local server that
speaks the OpenAI wire format, by pointing `OPENAI_BASE_URL` at it.
"""

import asyncio
import os
import sys

from tether.agent import Agent
from tether.errors import ModelAuthenticationError
from tether.event import TextBlockDeltaEvent, ToolCallEndEvent
from tether.message import UserMsg
from tether.model import OpenAIChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny and 21°C in {city}"


async def main() -> int:
    model = OpenAIChatModel(model=os.environ.get("OPENAI_MODEL", "gpt-4o-mini"))
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
