"""Seed sample for `reply`: the final `Msg` in one go."""

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
