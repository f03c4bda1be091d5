"""What it shows: `reply`: run the loop and get the final `Msg` in one go.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

A scripted model calls one tool, then answers; the script prints the answer.

Run it: `python examples/agentscope_compat/seed_reply.py` (no network needed).
"""

import asyncio

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def list_files() -> str:
    """List the files in the current directory."""
    return "README.md\npyproject.toml\nsrc/"


agent = Agent(
    name="my_agent",
    system_prompt="You are a helpful assistant.",
    model=ScriptedChatModel(
        [
            AssistantMsg("assistant", [ScriptedChatModel.tool_call("list_files")]),
            AssistantMsg(
                "assistant", "There are three entries: README.md, pyproject.toml and src/."
            ),
        ]
    ),
    toolkit=Toolkit(tools=[list_files]),
)


async def main():
    msg = UserMsg(name="user", content="What files are in the current directory?")
    result = await agent.reply(msg)
    print(result.get_text_content())


asyncio.run(main())
