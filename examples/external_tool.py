"""External execution: a tool the agent declares but the caller runs (a browser, a phone).

`is_external_tool=True` tools are never run by the agent. The reply pauses with a
`RequireExternalExecutionEvent` listing the calls; the caller runs them wherever it can
and resumes with an `ExternalExecutionResultEvent` carrying one `ToolResultBlock` per
call (matched by the call's `id`).

Run it: `python examples/external_tool.py` (offline).
"""

import asyncio

from tether.agent import Agent
from tether.event import (
    ExternalExecutionResultEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
)
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(is_external_tool=True)
def get_location() -> str:
    """The user's location, from their device (runs on the client, not in the agent)."""
    raise NotImplementedError("the client runs this tool")


model = ScriptedChatModel(
    [
        AssistantMsg("assistant", [ScriptedChatModel.tool_call("get_location")]),
        AssistantMsg("assistant", "You are in Lisbon: take a jacket, it is windy."),
    ]
)
agent = Agent(
    name="guide",
    system_prompt="You give local advice.",
    model=model,
    toolkit=Toolkit(tools=[get_location]),
)


def run_on_the_client(name: str) -> str:
    return {"get_location": "Lisbon, Portugal"}[name]


async def main() -> None:
    pause = None
    async for event in agent.reply_stream(UserMsg("user", "What should I wear today?")):
        if isinstance(event, RequireExternalExecutionEvent):
            pause = event
    assert pause is not None
    print("the client runs:", [tc.name for tc in pause.tool_calls])
    results = [
        ToolResultBlock(id=tc.id, name=tc.name, output=run_on_the_client(tc.name))
        for tc in pause.tool_calls
    ]
    resume = ExternalExecutionResultEvent(reply_id=pause.reply_id, execution_results=results)
    async for event in agent.reply_stream(resume):
        if isinstance(event, ReplyEndEvent):
            print(event.msg.get_text_content())


asyncio.run(main())
