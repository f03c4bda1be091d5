"""Custom tools: plain functions become tools from their signature and docstring.

Shows a sync tool, an async tool, a tool that streams its output, a tool that receives the
call's `ToolContext`, and a tool that raises (the model gets the error as the tool's result;
the reply goes on). Function tools run without asking unless declared with
`requires_confirmation=True` (see `confirm_and_resume.py`); `is_read_only=True` marks tools
that change nothing (the only ones the `explore` permission mode lets run), and
`is_concurrency_safe=True` lets consecutive calls run at the same time.

Run it: `python examples/custom_tools.py` (offline: a scripted model calls the tools).
"""

import asyncio
import json

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import ToolContext, Toolkit, tool


@tool(is_read_only=True)
def convert(amount: float, rate: float = 1.08) -> float:
    """Convert euros to dollars.

    Args:
        amount: The amount in euros.
        rate: Dollars per euro.
    """
    return round(amount * rate, 2)


@tool(is_read_only=True, is_concurrency_safe=True)
async def lookup_price(item: str) -> str:
    """Look up the price of an item (async tools run on the event loop)."""
    await asyncio.sleep(0)
    return f"{item}: 12.50 EUR"


@tool(is_read_only=True)
def count_down(start: int):
    """Count down; each yielded piece streams to the caller as it comes."""
    for n in range(start, 0, -1):
        yield f"{n}... "


@tool(is_read_only=True)
def whoami(context: ToolContext) -> str:
    """Say which call this is (a `ToolContext` parameter is filled in, not shown to the model)."""
    return f"call {context.tool_call_id} of reply {context.reply_id}"


@tool(is_read_only=True)
def divide(a: float, b: float) -> float:
    """Divide a by b."""
    return a / b


call = ScriptedChatModel.tool_call
model = ScriptedChatModel(
    [
        AssistantMsg(
            "assistant",
            [
                call("lookup_price", {"item": "coffee"}),
                call("convert", {"amount": 12.5}),
                call("count_down", {"start": 3}),
                call("whoami"),
                call("divide", {"a": 1, "b": 0}),
            ],
        ),
        AssistantMsg("assistant", "Coffee costs 12.50 EUR, about 13.50 USD."),
    ]
)
agent = Agent(
    name="shop",
    system_prompt="You help with prices.",
    model=model,
    toolkit=Toolkit(tools=[convert, lookup_price, count_down, whoami, divide]),
)


async def main() -> None:
    # What the model is told about a tool: its name, description and JSON schema.
    print(json.dumps(convert.json_schema()["parameters"]["properties"]["amount"]))
    msg = await agent.reply(UserMsg("user", "How much is a coffee in dollars?"))
    for result in msg.tool_results:
        print(f"{result.name} [{result.state}]: {result.get_text()[:70]}")
    print(msg.get_text_content())


asyncio.run(main())
