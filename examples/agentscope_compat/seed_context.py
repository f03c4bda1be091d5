"""What it shows: context settings: a custom `ContextConfig`, and compressing by hand.

Compatibility sample from tether's specification, which follows the AgentScope API
(AgentScope is the agent framework whose public names tether keeps): the code is the
specification's, with the package `agentscope` renamed `tether`.

The specification uses `DashScopeChatModel`; a `ScriptedChatModel` plays the model here
(it also writes the summary when the context is compressed), so it runs offline.

Run it: `python examples/agentscope_compat/seed_context.py` (no network needed).
"""

from __future__ import annotations

import asyncio
import tempfile

from tether.agent import Agent, ContextConfig
from tether.context import SUMMARY_INSTRUCTIONS, LocalFileOffloader
from tether.message import AssistantMsg, Msg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel


def scripted_model() -> ScriptedChatModel:
    """Answers every question with a paragraph, and every summarising call with a summary."""

    def respond(request: ChatRequest) -> Msg:
        if request.messages[0].get_text_content() == SUMMARY_INSTRUCTIONS:
            return AssistantMsg(name="model", content="## Goal\nAnswer questions about the trip.")
        return AssistantMsg(name="model", content="Here is a detailed answer. " * 60)

    return ScriptedChatModel([respond] * 40, context_length=8_000)


def build_agent(offload_root: str) -> Agent:
    """The seed's "custom context configuration" sample."""
    agent = Agent(
        name="my_agent",
        system_prompt="You are a helpful assistant.",
        model=scripted_model(),
        context_config=ContextConfig(
            trigger_ratio=0.7,  # compress when 70% of the context is used
            reserve_ratio=0.2,  # keep the most recent 20% after compressing
            tool_result_limit=1000,  # truncate tool results over 1000 tokens
        ),
        offloader=LocalFileOffloader(offload_root),
    )
    return agent


async def main() -> Agent:
    with tempfile.TemporaryDirectory() as root:
        agent = build_agent(root)
        for day in range(1, 6):
            await agent.reply(UserMsg(name="user", content=f"What should we do on day {day}?"))

        # The seed's "compressing the context" sample: with the agent's configuration...
        event = await agent.compress_context()
        print("compressed:", event.compressed_messages if event else 0, "messages")

        await agent.reply(UserMsg(name="user", content="And on day 6?"))
        # ...or with a configuration for this call only
        event = await agent.compress_context(
            ContextConfig(
                trigger_ratio=0.6,
                reserve_ratio=0.2,
            )
        )
        print("compressed:", event.compressed_messages if event else 0, "messages")
        print("summary:", agent.state.summary)
        return agent


if __name__ == "__main__":
    asyncio.run(main())
