"""Plugins: groups of tools that sleep as a one-line brief until the model wakes them.

A sleeping plugin costs the prompt one sentence (`sleep_brief`) and offers no tools. The
model wakes it with the built-in `activate_plugin` tool; its tools appear in the very next
model call of the same reply, and it stays awake for a few replies (`rounds`, default 3),
then sleeps again. A plugin with `allow_sleep=False` is always awake. `PluginActivatedEvent`
and `PluginSleptEvent` report the changes; `agent.state.plugins` holds the rounds left.

Run it: `python examples/plugins.py` (offline).
"""

import asyncio

from tether.agent import Agent
from tether.event import PluginActivatedEvent, PluginSleptEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.plugin import Plugin
from tether.tool import Toolkit


def convert_currency(amount: float, to: str) -> str:
    """Convert euros to another currency."""
    return f"{amount * 1.08:.2f} {to}"


finance = Plugin(
    name="Finance",
    module_name="finance",
    description="Currency conversion and prices",
    tools=[convert_currency],
    prompt="Round money to two decimals.",
    allow_sleep=True,
    sleep_brief="Converts currencies; activate when the user asks about money.",
)

call = ScriptedChatModel.tool_call
model = ScriptedChatModel(
    [
        AssistantMsg(
            "assistant", [call("activate_plugin", {"module_name": "finance", "rounds": 1})]
        ),
        AssistantMsg("assistant", [call("convert_currency", {"amount": 10, "to": "USD"})]),
        AssistantMsg("assistant", "10 EUR is 10.80 USD."),
        AssistantMsg("assistant", "Hello!"),
    ]
)
agent = Agent(
    name="assistant",
    system_prompt="You are helpful.",
    model=model,
    toolkit=Toolkit(plugins=[finance]),
)


async def main() -> None:
    for text in ["How much is 10 EUR in USD?", "Hi!"]:
        async for event in agent.reply_stream(UserMsg("user", text)):
            if isinstance(event, PluginActivatedEvent | PluginSleptEvent):
                print(f"{event.type}: {event.module_name}")
        print("rounds left:", agent.state.plugins)
    for i, request in enumerate(model.calls):
        print(f"model call {i}: tools offered = {[t['name'] for t in request.tools]}")


asyncio.run(main())
