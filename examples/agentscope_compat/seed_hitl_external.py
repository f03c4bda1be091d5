"""What it shows: external execution: a tool that the caller runs (e.g. in a browser).

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The reply pauses with a `RequireExternalExecutionEvent`; the caller runs the tool itself
and resumes the reply with an `ExternalExecutionResultEvent` carrying the result.

Run it: `python examples/agentscope_compat/seed_hitl_external.py` (no network needed).
"""

import asyncio

from tether.agent import Agent
from tether.event import ExternalExecutionResultEvent, RequireExternalExecutionEvent
from tether.message import AssistantMsg, TextBlock, ToolResultBlock, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(is_external_tool=True)
def get_browser_location() -> str:
    """Ask the user's browser for its location (runs in the front end)."""


agent = Agent(
    name="my_agent",
    system_prompt="You are a helpful assistant.",
    model=ScriptedChatModel(
        [
            AssistantMsg("assistant", [ScriptedChatModel.tool_call("get_browser_location")]),
            AssistantMsg("assistant", "You are in Hangzhou."),
        ]
    ),
    toolkit=Toolkit(tools=[get_browser_location]),
)


async def run_external_operation(name: str, arguments: str) -> str:
    # Perform the actual operation (API call, manual operation, etc.)
    return "30.27N, 120.15E (Hangzhou)"


async def main():
    msg = UserMsg(name="user", content="Where am I?")
    # Step 1: receive the RequireExternalExecutionEvent
    async for event in agent.reply_stream(msg):
        if isinstance(event, RequireExternalExecutionEvent):
            for tc in event.tool_calls:
                print(f"External execution: {tc.name}({tc.input})")

    # Step 2: execute externally and build the results
    execution_results = []
    for tc in event.tool_calls:
        output = await run_external_operation(tc.name, tc.input)
        execution_results.append(
            ToolResultBlock(
                id=tc.id,
                name=tc.name,
                output=[TextBlock(text=output)],
                state=ToolResultState.SUCCESS,
            )
        )

    # Step 3: resume the agent
    external_event = ExternalExecutionResultEvent(
        reply_id=event.reply_id,
        execution_results=execution_results,
    )
    result = await agent.reply(external_event)
    print(result.get_text_content())


asyncio.run(main())
