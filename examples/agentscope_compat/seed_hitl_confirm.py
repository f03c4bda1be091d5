"""What it shows: human confirmation: a tool that asks before it runs.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The reply pauses with a `RequireUserConfirmEvent`; the user confirms and accepts the
suggested rule, the reply resumes, and the next matching call runs without asking.

Run it: `python examples/agentscope_compat/seed_hitl_confirm.py` (no network needed).
"""

import asyncio

from tether.agent import Agent
from tether.event import ConfirmResult, RequireUserConfirmEvent, UserConfirmResultEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(requires_confirmation=True)
def write_note(path: str, text: str) -> str:
    """Write a note to a file."""
    return f"wrote {len(text)} characters to {path}"


call = ScriptedChatModel.tool_call
agent = Agent(
    name="my_agent",
    system_prompt="You are a helpful assistant.",
    model=ScriptedChatModel(
        [
            AssistantMsg(
                "assistant", [call("write_note", {"path": "todo.md", "text": "buy milk"})]
            ),
            AssistantMsg("assistant", "Saved your note."),
            AssistantMsg(
                "assistant", [call("write_note", {"path": "todo.md", "text": "buy eggs"})]
            ),
            AssistantMsg("assistant", "Saved that one too, without asking: you allowed it."),
        ]
    ),
    toolkit=Toolkit(tools=[write_note]),
)


async def main():
    msg = UserMsg(name="user", content="Note: buy milk")
    # Step 1: receive the RequireUserConfirmEvent
    async for event in agent.reply_stream(msg):
        if isinstance(event, RequireUserConfirmEvent):
            for tc in event.tool_calls:
                print(f"Tool: {tc.name}, input: {tc.input}")
                print(f"Suggested rules: {tc.suggested_rules}")

    # Step 2: build the confirmation results
    confirm_results = []
    for tc in event.tool_calls:
        confirm_results.append(
            ConfirmResult(
                confirmed=True,  # or False to deny
                tool_call=tc,  # pass back (optionally modified)
                rules=tc.suggested_rules,  # accept the rules so that future calls are allowed automatically
            )
        )

    # Step 3: resume the agent
    confirm_event = UserConfirmResultEvent(
        reply_id=event.reply_id,
        confirm_results=confirm_results,
    )
    result = await agent.reply(confirm_event)
    print(result.get_text_content())

    # The accepted rule was remembered: the next matching call runs without asking.
    result = await agent.reply(UserMsg(name="user", content="Note: buy eggs"))
    print(result.get_text_content())


asyncio.run(main())
