"""What it shows: the built-in coding tools: Read, Grep, Edit, Bash (and Write).

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

A scripted model reads a file, greps the project, edits the file and runs it, in a
throwaway project folder that the session's permission settings name as the work dir:
reads there run freely, the `accept_edits` mode lets the edit through, and an allow rule
lets the one command run.

Run it: `python examples/agentscope_compat/seed_tools.py` (no network needed).
"""

import asyncio
import shutil
import tempfile
from pathlib import Path

from tether.agent import Agent
from tether.event import ToolCallStartEvent, ToolResultEndEvent
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext
from tether.state import AgentState
from tether.tool import Bash, Edit, Grep, Read, Toolkit, Write

project = Path(tempfile.mkdtemp(prefix="tether-seed-tools-"))
(project / "hello.py").write_text(
    'def greet(name):\n    return "Hello, " + name\n\n\nprint(greet("world"))\n'
)


def last_result(request) -> str:
    """The text of the newest tool result the model was shown."""
    for msg in reversed(request.messages):
        for block in reversed(msg.content):
            if isinstance(block, ToolResultBlock):
                return block.get_text()
    return ""


call = ScriptedChatModel.tool_call
model = ScriptedChatModel(
    [
        AssistantMsg("assistant", [call("Read", {"file_path": "hello.py"})]),
        AssistantMsg("assistant", [call("Grep", {"pattern": "greet", "output_mode": "content"})]),
        AssistantMsg(
            "assistant",
            [
                call(
                    "Edit", {"file_path": "hello.py", "old_string": "Hello, ", "new_string": "Hi, "}
                )
            ],
        ),
        AssistantMsg(
            "assistant",
            [call("Bash", {"command": "python3 hello.py", "description": "Run the script"})],
        ),
        lambda request: AssistantMsg(
            "assistant", f"Done. The script now prints: {last_result(request).splitlines()[0]}"
        ),
    ]
)

agent = Agent(
    name="my_agent",
    system_prompt="You are an AI assistant.",
    model=model,
    toolkit=Toolkit(
        tools=[Bash(), Edit(), Grep(), Read(), Write()],
    ),
    state=AgentState(
        permission_context=PermissionContext(
            mode="accept_edits",
            working_directories=[str(project)],
            allow_rules=["Bash(python3 hello.py)"],
        )
    ),
)


async def main():
    msg = UserMsg(name="user", content="Make hello.py greet with 'Hi' instead of 'Hello'.")
    async for event in agent.reply_stream(msg):
        if isinstance(event, ToolCallStartEvent):
            print(f"[calling {event.name}]")
        elif isinstance(event, ToolResultEndEvent):
            print(f"  -> {event.state.value}: {event.tool_result.get_text().splitlines()[0]}")
    print(agent.state.context[-1].get_text_content())
    print((project / "hello.py").read_text().splitlines()[1].strip())
    model.assert_complete()


try:
    asyncio.run(main())
finally:
    shutil.rmtree(project)
