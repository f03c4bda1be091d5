"""Pause in one process, resume in another: the whole reply lives in the saved `AgentState`.

The first process starts a reply that pauses for confirmation and saves the session to
SQLite. A second, fresh Python process (this script run with `--resume`) loads the
session, confirms the pending call, finishes the reply and saves it again. Nothing but
the database is shared: this is how a web service or a queue worker resumes a pause.

The database goes to `$TETHER_EXAMPLE_DIR` if set, else to a temporary folder.

Run it: `python examples/resume_in_another_process.py` (offline).
"""

import asyncio
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from tether.agent import Agent
from tether.app.storage import SQLiteStorage
from tether.event import ConfirmResult, RequireUserConfirmEvent, UserConfirmResultEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import Toolkit, tool

IDS = {"user_id": "alice", "agent_id": "deployer", "session_id": "release-42"}


@tool(requires_confirmation=True)
def deploy(version: str) -> str:
    """Deploy a version to production."""
    return f"deployed {version} from process {os.getpid()}"


ASK = AssistantMsg("assistant", [ScriptedChatModel.tool_call("deploy", {"version": "1.4"})])
DONE = AssistantMsg("assistant", "Version 1.4 is live.")


def build_agent(state: AgentState, steps: list[AssistantMsg]) -> Agent:
    # Each process builds the same agent (configuration only) around the loaded state; the
    # scripted model plays the model steps that happen in that process.
    return Agent(
        name="deployer",
        system_prompt="You deploy releases.",
        model=ScriptedChatModel(steps),
        toolkit=Toolkit(tools=[deploy]),
        state=state,
    )


async def first_process(db: Path) -> RequireUserConfirmEvent:
    agent = build_agent(AgentState(), [ASK])
    pause = None
    async for event in agent.reply_stream(UserMsg("user", "Ship 1.4.")):
        if isinstance(event, RequireUserConfirmEvent):
            pause = event
    assert pause is not None
    print(
        f"first process: paused, asking about {pause.tool_calls[0].name}{pause.tool_calls[0].input}"
    )
    async with SQLiteStorage(db) as storage:
        await storage.upsert_session(**IDS, state=agent.state)
    return pause  # in a service this event goes to the user, as JSON


async def second_process(db: Path, pause_json: str) -> None:
    pause = RequireUserConfirmEvent.model_validate_json(pause_json)  # the user's screen
    answer = UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=tc) for tc in pause.tool_calls],
    )
    async with SQLiteStorage(db) as storage:
        record = await storage.get_session(**IDS)
        assert record is not None
        agent = build_agent(record.state, [DONE])
        msg = await agent.reply(answer)
        await storage.update_session_state(**IDS, state=agent.state)
    print(f"second process: {msg.tool_results[0].get_text()}; {msg.get_text_content()}")


def main() -> None:
    if len(sys.argv) == 4 and sys.argv[1] == "--resume":
        asyncio.run(second_process(Path(sys.argv[2]), sys.argv[3]))
        return
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(os.environ.get("TETHER_EXAMPLE_DIR") or tmp) / "resume_example.db"
        db.unlink(missing_ok=True)
        pause = asyncio.run(first_process(db))
        resume = [sys.executable, __file__, "--resume", str(db), pause.model_dump_json()]
        subprocess.run(resume, check=True)


if __name__ == "__main__":
    main()
