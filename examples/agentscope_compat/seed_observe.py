"""What it shows: `observe`: add another agent's message to the context without replying.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

`observe` never calls the model; the next `reply` sees the observed message.

Run it: `python examples/agentscope_compat/seed_observe.py` (no network needed).
"""

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
