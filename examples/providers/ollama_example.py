"""A model served by Ollama, on this machine or hosted.

`OllamaChatModel` talks to `/api/chat` and streams NDJSON; a local server needs no
key (`ollama serve`, then `ollama pull llama3.1`).

Environment: `OLLAMA_HOST` (default `http://127.0.0.1:11434`), `OLLAMA_API_KEY` (only for a
hosted server), `OLLAMA_MODEL` (default `llama3.1`).
Quirks: Ollama cannot force a tool call (it is asked for in a reminder), and its calls
come without ids (tether adds them).

Install: `pip install 'tether[ollama]'`. Run it: `python examples/providers/ollama_example.py`
(it streams the answer and calls one tool; the file is not named after the SDK, which it
would shadow). The tests run it against a local server that
speaks the Ollama wire format, by pointing `OLLAMA_HOST` at it.
"""

import asyncio
import os
import sys

from tether.agent import Agent
from tether.errors import ModelAuthenticationError, ModelRetryableError
from tether.event import TextBlockDeltaEvent, ToolCallEndEvent
from tether.message import UserMsg
from tether.model import OllamaChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def get_weather(city: str) -> str:
    """The current weather in a city.

    Args:
        city: The city name.
    """
    return f"Sunny and 21°C in {city}"


async def main() -> int:
    model = OllamaChatModel(model=os.environ.get("OLLAMA_MODEL", "llama3.1"))
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
    except (ModelAuthenticationError, ModelRetryableError) as error:
        print(error, file=sys.stderr)  # says which variable to set, or where no server answered
        return 1
    finally:
        await model.aclose()
    print()
    return 0


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
