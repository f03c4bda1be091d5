"""Middleware: log every model call and tool call, time them, and add to the system prompt.

A middleware subclasses `MiddlewareBase` and overrides the hooks it needs. Iterator hooks
(`on_reply`, `on_reasoning`, `on_model_call`, `on_acting`) wrap a step: code before
`call_next(call)` runs before it, code after runs after it, and they may change what
passes through. The first middleware in the list is the outermost. Here one middleware
logs with the standard `logging` module, and a second one refuses a tool call by
short-circuiting `on_check_permission`.

Run it: `python examples/middleware_logging.py` (offline).
"""

import asyncio
import logging
import sys
import time

from tether.agent import Agent
from tether.message import AssistantMsg, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ScriptedChatModel
from tether.permission import PermissionBehavior, PermissionDecision
from tether.tool import Toolkit, tool

logging.basicConfig(stream=sys.stdout, level=logging.INFO, format="%(name)s: %(message)s")
log = logging.getLogger("example.agent")


class LoggingMiddleware(MiddlewareBase):
    async def on_model_call(self, call, call_next):
        started = time.perf_counter()
        log.info(
            "model call: %d messages, %d tools", len(call.request.messages), len(call.request.tools)
        )
        async for delta in call_next(call):
            yield delta
        log.info("model call done in %.1f ms", (time.perf_counter() - started) * 1000)

    async def on_acting(self, call, call_next):
        log.info("tool %s(%s)", call.tool_call.name, call.tool_call.input)
        async for event in call_next(call):
            yield event

    async def on_system_prompt(self, prompt, call):
        return prompt + "\nAnswer in one sentence."


class NoDeletes(MiddlewareBase):
    """A guardrail: deny any call to `delete_file`, whatever the rules say."""

    async def on_check_permission(self, call, call_next):
        if call.tool_call.name == "delete_file":
            return PermissionDecision(behavior=PermissionBehavior.DENY, reason="deletes are off")
        return await call_next(call)


@tool(is_read_only=True)
def list_files() -> list[str]:
    """List the files."""
    return ["notes.txt", "old.log"]


@tool(is_read_only=True)
def delete_file(path: str) -> str:
    """Delete a file."""
    return f"deleted {path}"


call = ScriptedChatModel.tool_call
model = ScriptedChatModel(
    [
        AssistantMsg("assistant", [call("list_files")]),
        AssistantMsg("assistant", [call("delete_file", {"path": "old.log"})]),
        AssistantMsg("assistant", "I could not delete old.log: deletes are turned off."),
    ]
)
agent = Agent(
    name="janitor",
    system_prompt="You tidy folders.",
    model=model,
    toolkit=Toolkit(tools=[list_files, delete_file]),
    middlewares=[LoggingMiddleware(), NoDeletes()],
)


async def main() -> None:
    msg = await agent.reply(UserMsg("user", "Remove old logs."))
    print(msg.get_text_content())
    print("system prompt sent:", repr(model.calls[0].messages[0].get_text_content()))
    print("delete_file result:", msg.tool_results[-1].get_text())


asyncio.run(main())
