"""What it shows: saving a session and continuing it later, with `RedisStorage`.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

Needs a Redis server at localhost:6379 (`REDIS_PORT` and `REDIS_DB` pick another port and
database). A
`ScriptedChatModel` replaces the DashScope model, and the session is created with
`upsert_session` on first use. Run it twice: the second run continues the session.

Run it: `python examples/agentscope_compat/seed_redis.py` (needs Redis).
"""

import asyncio
import os

from tether.agent import Agent
from tether.app.storage import RedisStorage
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState

USER_ID = "user_123"
AGENT_ID = "agent_456"
SESSION_ID = "session_789"


async def main():
    # The specification connects to localhost:6379; REDIS_PORT and REDIS_DB pick another.
    port, db = int(os.environ.get("REDIS_PORT", "6379")), int(os.environ.get("REDIS_DB", "0"))
    async with RedisStorage(host="localhost", port=port, db=db) as storage:
        # Load the state from storage; if none exists, use a fresh state
        record = await storage.get_session(
            user_id=USER_ID,
            agent_id=AGENT_ID,
            session_id=SESSION_ID,
        )
        state = record.state if record else AgentState()

        # Create the agent with the restored state
        agent = Agent(
            name="my_agent",
            system_prompt="You are a helpful assistant.",
            model=ScriptedChatModel([AssistantMsg("my_agent", "Continuing the previous task.")]),
            state=state,
        )

        # Run one round of reply
        result = await agent.reply(
            UserMsg(name="user", content="Continue the previous task."),
        )
        print(result.get_text_content())

        # Persist the updated state back to Redis: create the session on first use,
        # then update it on later rounds (update_session_state raises KeyError if the
        # session does not exist yet)
        if record is None:
            await storage.upsert_session(
                user_id=USER_ID,
                agent_id=AGENT_ID,
                session_id=SESSION_ID,
                state=agent.state,
            )
        else:
            await storage.update_session_state(
                user_id=USER_ID,
                agent_id=AGENT_ID,
                session_id=SESSION_ID,
                state=agent.state,
            )
        print(f"saved {len(agent.state.context)} messages")


asyncio.run(main())
