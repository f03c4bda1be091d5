"""Retries and a fallback model: transient failures are retried, then another model takes over.

`ModelConfig(max_retries=..., initial_retry_delay=..., fallback_model=...)` wraps every
model call: a retryable error (rate limit, 5xx, timeout, dropped connection) is retried
with exponential backoff, and once the main model's retries run out the fallback model
is called. Each retry is announced by a `ModelRetryEvent`. Errors that retrying cannot fix
(a bad key, a bad request) are raised at once as `tether.errors.ModelError`s.

Run it: `python examples/retries_and_fallback.py` (offline: the scripted main model fails).
"""

import asyncio

from tether.agent import Agent, ModelConfig
from tether.event import ModelRetryEvent, ReplyEndEvent
from tether.message import AssistantMsg, UserMsg
from tether.model import ScriptedChatModel

# `ConnectionError` and `TimeoutError` steps count as retryable failures.
main_model = ScriptedChatModel([ConnectionError("reset by peer")] * 3, name="main-model")
backup = ScriptedChatModel([AssistantMsg("assistant", "Answer from the backup.")], name="backup")

agent = Agent(
    name="resilient",
    system_prompt="You answer questions.",
    model=main_model,
    model_config=ModelConfig(
        max_retries=2,  # 1 call + 2 retries on the main model
        initial_retry_delay=0.01,  # seconds; doubled each time (capped by max_retry_delay)
        fallback_model=backup,
    ),
)


async def main() -> None:
    async for event in agent.reply_stream(UserMsg("user", "Hello?")):
        if isinstance(event, ModelRetryEvent):
            print(
                f"attempt {event.attempt} on {event.model_name} failed ({event.error}); "
                f"next: {event.next_model_name}"
            )
        elif isinstance(event, ReplyEndEvent):
            print(event.msg.get_text_content())


asyncio.run(main())
