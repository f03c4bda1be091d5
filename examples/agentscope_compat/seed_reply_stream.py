"""What it shows: `reply_stream`: react to each event as it arrives.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The loop dispatches on `event.type` (text deltas, tool calls, the end of the reply),
the way a chat UI renders a streamed answer.

Run it: `python examples/agentscope_compat/seed_reply_stream.py` (no network needed).
"""

import asyncio

from tether.agent import Agent
from tether.event import EventType
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def read_readme() -> str:
    """Return the README."""
    return "# tether\nAgents you can trust with real tools."


agent = Agent(
    name="my_agent",
    system_prompt="You are a helpful assistant.",
    model=ScriptedChatModel(
        [
            AssistantMsg("assistant", [ScriptedChatModel.tool_call("read_readme")]),
            AssistantMsg(
                "assistant", "The README says tether builds agents you can trust with tools."
            ),
        ]
    ),
    toolkit=Toolkit(tools=[read_readme]),
)


async def main():
    msg = UserMsg(name="user", content="Summarize the contents of the README.")
    async for event in agent.reply_stream(msg):
        # Dispatch on `event.type` — each branch corresponds to one event type.
        match event.type:
            case EventType.TEXT_BLOCK_DELTA:
                # A streamed text fragment returned by the model.
                print(event.delta, end="", flush=True)
            case EventType.TOOL_CALL_START:
                # The agent is about to call a tool — display the call information.
                print(f"[calling {event.name}]")
            case _:
                # Other events: thinking blocks, tool results, end of reply, etc.
                ...
    print()


asyncio.run(main())
