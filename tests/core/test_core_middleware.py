"""Middleware: onion order, rewriting inputs, short-circuits, observation."""

from __future__ import annotations

import dataclasses

from tether.agent import Agent
from tether.event import CustomEvent, EventType
from tether.message import AssistantMsg, TextBlock, ToolResultBlock, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ScriptedChatModel, TextDelta
from tether.permission import PermissionBehavior, PermissionDecision
from tether.tool import ToolContext, Toolkit, tool

call = ScriptedChatModel.tool_call


class Recorder(MiddlewareBase):
    def __init__(self, name: str, log: list[str]) -> None:
        self.name, self.log = name, log

    async def on_reply(self, c, call_next):
        self.log.append(f"{self.name} reply in")
        async for e in call_next(c):
            yield e
        self.log.append(f"{self.name} reply out")

    async def on_reasoning(self, c, call_next):
        self.log.append(f"{self.name} reasoning {c.iteration}")
        async for e in call_next(c):
            yield e

    async def on_acting(self, c, call_next):
        self.log.append(f"{self.name} acting {c.tool_call.name}")
        async for e in call_next(c):
            yield e

    async def on_system_prompt(self, prompt, c):
        return f"{prompt} [{self.name}]"


@tool
def ping() -> str:
    """Ping."""
    return "pong"


async def test_first_listed_is_outermost_and_every_hook_runs() -> None:
    log: list[str] = []
    model = ScriptedChatModel([AssistantMsg("a", [call("ping")]), AssistantMsg("a", "done")])
    agent = Agent(
        name="bot",
        system_prompt="base",
        model=model,
        toolkit=Toolkit(tools=[ping]),
        middlewares=[Recorder("outer", log), Recorder("inner", log)],
    )
    await agent.reply(UserMsg("user", "x"))
    assert log == [
        "outer reply in",
        "inner reply in",
        "outer reasoning 1",
        "inner reasoning 1",
        "outer acting ping",
        "inner acting ping",
        "outer reasoning 2",
        "inner reasoning 2",
        "inner reply out",
        "outer reply out",
    ]
    assert model.calls[0].messages[0].get_text_content() == "base [outer] [inner]"


async def test_model_call_hook_can_rewrite_the_request_and_short_circuit() -> None:
    class Rewrite(MiddlewareBase):
        async def on_model_call(self, c, call_next):
            request = dataclasses.replace(c.request, tools=[])
            async for d in call_next(dataclasses.replace(c, request=request)):
                yield d

    class Cache(MiddlewareBase):
        async def on_model_call(self, c, call_next):
            yield TextDelta(text="from cache")

    model = ScriptedChatModel([AssistantMsg("a", "from model")])
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[ping]),
        middlewares=[Rewrite()],
    )
    await agent.reply(UserMsg("user", "x"))
    assert model.calls[0].tools == []

    cached = Agent(
        name="bot", system_prompt="p", model=ScriptedChatModel([]), middlewares=[Cache()]
    )
    assert (await cached.reply(UserMsg("user", "x"))).get_text_content() == "from cache"


async def test_acting_hook_can_short_circuit_a_tool() -> None:
    from tether.event import ToolResultEndEvent

    ran: list[str] = []

    @tool
    def dangerous() -> str:
        """Do it."""
        ran.append("ran")
        return "done"

    class Guard(MiddlewareBase):
        async def on_acting(self, c, call_next):
            yield ToolResultEndEvent(
                reply_id=c.reply_id,
                block_id=c.tool_call.id,
                tool_result=ToolResultBlock(
                    id=c.tool_call.id, name=c.tool_call.name, output="blocked by guard"
                ),
            )

    model = ScriptedChatModel([AssistantMsg("a", [call("dangerous")]), AssistantMsg("a", "ok")])
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[dangerous]),
        middlewares=[Guard()],
    )
    final = await agent.reply(UserMsg("user", "x"))
    assert ran == [] and final.tool_results[0].get_text() == "blocked by guard"


async def test_permission_hook_can_decide() -> None:
    class DenyAll(MiddlewareBase):
        async def on_check_permission(self, c, call_next):
            return PermissionDecision(behavior=PermissionBehavior.DENY, reason="policy forbids it")

    model = ScriptedChatModel([AssistantMsg("a", [call("ping")]), AssistantMsg("a", "ok")])
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[ping]),
        middlewares=[DenyAll()],
    )
    final = await agent.reply(UserMsg("user", "x"))
    assert (
        final.tool_results[0].state == "denied"
        and "policy forbids it" in final.tool_results[0].output
    )


async def test_reply_hook_can_add_events_and_tools_can_emit() -> None:
    class Announce(MiddlewareBase):
        async def on_reply(self, c, call_next):
            async for e in call_next(c):
                yield e
            yield CustomEvent(reply_id="-", name="audit", data={"ok": True})

    @tool
    async def progress(ctx_note: str, context: ToolContext) -> str:
        """Emit progress."""
        await context.emit(
            CustomEvent(reply_id=context.reply_id, name="progress", data={"pct": 50})
        )
        return "half"

    assert "context" not in progress.input_model.model_fields
    model = ScriptedChatModel(
        [
            AssistantMsg("a", [call("progress", {"ctx_note": "n"})]),
            AssistantMsg("a", [TextBlock(text="ok")]),
        ]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[progress]),
        middlewares=[Announce()],
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "x"))]
    names = [e.name for e in events if e.type is EventType.CUSTOM]
    assert names == ["progress", "audit"]
