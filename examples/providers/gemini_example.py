"""Google Gemini through the Gemini Developer API.

`GeminiChatModel` keeps Gemini's thought signatures and sends them back, which
function calling with thinking models requires.

Environment: `GEMINI_API_KEY` (or `GOOGLE_API_KEY`), `GOOGLE_GEMINI_BASE_URL` (optional),
`GEMINI_MODEL` (default `gemini-2.5-flash`).
Quirks: always the Developer API, never Vertex AI (even when
`GOOGLE_GENAI_USE_VERTEXAI` is set).

Install: `pip install 'tether[gemini]'`. Run it: `python examples/providers/gemini_example.py`
(it streams the answer and calls one tool; the file is not named after the SDK, which it
would shadow). The tests run it against a local server that
speaks the Gemini wire format, by pointing `GOOGLE_GEMINI_BASE_URL` at it.
"""

import asyncio
import os
import sys

from tether.agent import Agent
from tether.errors import ModelAuthenticationError
from tether.event import TextBlockDeltaEvent, ToolCallEndEvent
from tether.message import UserMsg
from tether.model import GeminiChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny and 21°C in {city}"


async def main() -> int:
    model = GeminiChatModel(model=os.environ.get("GEMINI_MODEL", "gemini-2.5-flash"))
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
