"""The README's example, verbatim: an agent with one tool, driven by a scripted model."""

import asyncio

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


model = ScriptedChatModel(
    [
        AssistantMsg("assistant", [ScriptedChatModel.tool_call("add", {"a": 2, "b": 3})]),
        AssistantMsg("assistant", "2 + 3 = 5"),
    ]
)
agent = Agent(
    name="calc", system_prompt="You add numbers.", model=model, toolkit=Toolkit(tools=[add])
)
print(asyncio.run(agent.reply(UserMsg("user", "What is 2 + 3?"))).get_text_content())
