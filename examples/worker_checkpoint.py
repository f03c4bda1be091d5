"""A worker that serves one session from storage, saving it at every save point.

Many workers may run this on one session: the checkpoint's versioned write is the claim, so
the slower of two gets `SessionConflictError` before its next tool runs. A reply a crashed
worker left unfinished is continued (`reply(None)`). Usage: `worker_checkpoint.py [db] [text]`.
"""

import asyncio
import sys
import tempfile

from tether.agent import Agent
from tether.app.storage import SQLiteStorage
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel

KEY = ("user_1", "agent_1", "session_1")


async def serve(path: str, text: str) -> None:
    async with SQLiteStorage(path) as storage:
        record = await storage.get_session(*KEY) or await storage.upsert_session(*KEY)
        model = ScriptedChatModel([AssistantMsg("worker", f"Done: {text}")])
        agent = Agent("worker", "You are a helpful assistant.", model, state=record.state)
        # A reply in progress (a crashed worker's, or a pause) is continued, not restarted.
        inputs = UserMsg("user", text) if record.state.pending is None else None
        msg = await agent.reply(inputs, checkpoint=storage.checkpoint(*KEY))
        print(msg.get_text_content(), f"({len(agent.state.context)} messages stored)")


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as scratch:
        db = sys.argv[1] if len(sys.argv) > 1 else f"{scratch}/sessions.db"
        asyncio.run(serve(db, sys.argv[2] if len(sys.argv) > 2 else "hello"))
