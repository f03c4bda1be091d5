"""Context compression and offloading: long sessions stay inside the model's window.

`ContextConfig` says when to compress (`trigger_ratio` of `model.context_length`), how much
recent context to keep verbatim (`reserve_ratio`), and how long a tool result may be
(`tool_result_limit`, in tokens). Older messages are summarised by the model; with an
`offloader`, they are first written out in full (and so is the full text of a truncated
tool result), and the context keeps the path so the agent can read them back.

Run it: `python examples/compression_and_offload.py` (offline). Files go to
`$TETHER_EXAMPLE_DIR` if set, else to a temporary folder.
"""

import asyncio
import os
import tempfile

from tether.agent import Agent
from tether.context import SUMMARY_INSTRUCTIONS, ContextConfig, LocalFileOffloader
from tether.event import ContextCompressedEvent
from tether.message import AssistantMsg, Msg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.tool import Toolkit, tool


@tool(is_read_only=True)
def read_log() -> str:
    """Read the server log (long)."""
    return "\n".join(f"12:{i:02d} GET /health 200" for i in range(400))


def respond(request: ChatRequest) -> Msg:
    """The scripted model: summarises when asked to, otherwise answers at length."""
    if request.messages[0].get_text_content() == SUMMARY_INSTRUCTIONS:
        return AssistantMsg("model", "## Goal\nWatch the server.\n## Done\nRead the log.")
    return AssistantMsg("model", "All healthy. " * 200)


async def main(folder: str) -> None:
    agent = Agent(
        name="ops",
        system_prompt="You watch servers.",
        model=ScriptedChatModel(
            [AssistantMsg("model", [ScriptedChatModel.tool_call("read_log")])] + [respond] * 30,
            context_length=4_000,
        ),
        toolkit=Toolkit(tools=[read_log]),
        context_config=ContextConfig(trigger_ratio=0.7, reserve_ratio=0.2, tool_result_limit=300),
        offloader=LocalFileOffloader(folder),
    )
    msg = await agent.reply(UserMsg("user", "Check the log."))
    result = msg.tool_results[0]
    print(
        "tool result kept in context:",
        len(result.get_text()),
        "characters; full text at",
        os.path.basename(result.metadata["offload_path"]),
    )
    for day in range(1, 6):
        async for event in agent.reply_stream(UserMsg("user", f"Day {day}: anything new?")):
            if isinstance(event, ContextCompressedEvent):
                print(
                    f"day {day}: compressed {event.compressed_messages} messages, "
                    f"{event.before_tokens} -> {event.after_tokens} tokens; originals in "
                    f"{os.path.basename(event.offload_path)}"
                )
    print("summary:", agent.state.summary.splitlines()[0])


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(main(os.environ.get("TETHER_EXAMPLE_DIR") or tmp))
