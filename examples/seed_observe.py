"""Seed sample for `observe`: add messages to the context without a reply."""

import asyncio

from tether.agent import Agent
from tether.message import AssistantMsg, Msg, UserMsg
from tether.model import ScriptedChatModel

model = ScriptedChatModel([AssistantMsg("assistant", "Bob said the build is green.")])
agent = Agent(name="my_agent", system_prompt="You are a helpful assistant.", model=model)
other_agent_msg = Msg(name="bob", role="assistant", content="The build is green.")


async def main():
    await agent.observe(other_agent_msg)
    print(
        f"context has {len(agent.state.context)} message(s); the model was called {len(model.calls)} time(s)"
    )
    result = await agent.reply(UserMsg(name="user", content="What did Bob say?"))
    print(result.get_text_content())


asyncio.run(main())
