"""Seed sample "最小配置" (minimal configuration), with a scripted model in place of DashScope.

The seed builds `DashScopeChatModel(credential=DashScopeCredential(api_key=...), model="qwen-max")`;
offline, a `ScriptedChatModel` plays the model. Swap it back to talk to Qwen.
"""

import asyncio

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel

agent = Agent(
    name="my_agent",
    system_prompt="You are a helpful assistant.",
    model=ScriptedChatModel([AssistantMsg("assistant", "Hello! How can I help you today?")]),
)


async def main() -> None:
    result = await agent.reply(UserMsg(name="user", content="Hi!"))
    print(result.get_text_content())


if __name__ == "__main__":
    asyncio.run(main())
