"""What it shows: the smallest agent: a name, a system prompt and a model.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The specification builds `DashScopeChatModel(credential=DashScopeCredential(api_key=...),
model="qwen-max")`; here a `ScriptedChatModel` plays the model so it runs offline. Swap it
back (and set `DASHSCOPE_API_KEY`) to talk to Qwen.

Run it: `python examples/agentscope_compat/seed_minimal_agent.py` (no network needed).
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
