"""Middleware: onion order, rewriting inputs, short-circuits, observation."""

from __future__ import annotations

import dataclasses

import pytest

from tether.agent import Agent
from tether.event import CustomEvent, EventType, UserInterruptEvent
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


class Boom(Exception):
    pass


def raising(hook: str, when: str) -> MiddlewareBase:
    """A middleware whose `hook` raises before, amid or after the wrapped work."""

    async def iterator_hook(self, c, call_next):  # type: ignore[no-untyped-def]
        if when == "before":
            raise Boom(hook)
        async for item in call_next(c):
            yield item
            if when == "amid":
                raise Boom(hook)
        raise Boom(hook)

    async def awaitable_hook(self, c, call_next):  # type: ignore[no-untyped-def]
        if when == "before":
            raise Boom(hook)
        await call_next(c)
        raise Boom(hook)

    async def prompt_hook(self, prompt, c):  # type: ignore[no-untyped-def]
        raise Boom(hook)

    kind = {"on_check_permission": awaitable_hook, "on_system_prompt": prompt_hook}
    return type("Raising", (MiddlewareBase,), {hook: kind.get(hook, iterator_hook)})()


HOOK_CASES = [
    (hook, when)
    for hook in ("on_reply", "on_reasoning", "on_model_call", "on_acting", "on_check_permission")
    for when in ("before", "amid", "after")
    if not (hook == "on_check_permission" and when == "amid")
] + [("on_system_prompt", "before")]


@pytest.mark.parametrize("hook, when", HOOK_CASES)
async def test_a_hook_that_raises_leaves_a_state_that_goes_on(hook: str, when: str) -> None:
    from tether.message import ToolCallState, ToolResultState
    from tether.state import AgentState

    @tool(is_concurrency_safe=True, requires_confirmation=True)
    def risky(n: int) -> str:
        """Needs confirmation."""
        return "ok"

    @tool(is_concurrency_safe=True)
    def safe(n: int) -> str:
        """Safe."""
        return "ok"

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("risky", {"n": 1}, id="r1"), call("safe", {"n": 2}, id="s1")])]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[risky, safe]),
        middlewares=[raising(hook, when)],
    )
    seen = []
    with pytest.raises(Boom):
        async for event in agent.reply_stream(UserMsg("user", "x")):
            seen.append(event)
    state = AgentState.model_validate_json(agent.state.model_dump_json())
    msg = state.reply_msg()
    paused = any(e.type == "require_user_confirm" for e in seen)
    for c in msg.tool_calls if msg is not None else []:
        assert c.state is not ToolCallState.ALLOWED
        assert c.state is not ToolCallState.ASKING or paused, "asking without its pause"
    assert all(r.state is not ToolResultState.RUNNING for r in (msg.tool_results if msg else []))
    # the session goes on: with a plain agent, a pause is answered and a message is taken
    plain = Agent(
        name="bot",
        system_prompt="p",
        model=ScriptedChatModel([AssistantMsg("a", "fine")]),
        toolkit=Toolkit(tools=[risky, safe]),
        state=state,
    )
    if paused:
        await plain.reply(UserInterruptEvent(reply_id=msg.id))
    assert (await plain.reply(UserMsg("user", "y"))).get_text_content() == "fine"


async def test_a_reply_hook_that_ends_without_the_reply_is_a_config_error() -> None:
    from tether.errors import ConfigError, ModelAuthenticationError

    class Short(MiddlewareBase):
        async def on_reply(self, c, call_next):
            yield CustomEvent(reply_id="-", name="nothing else")

    class Swallow(MiddlewareBase):
        async def on_reply(self, c, call_next):
            try:
                async for e in call_next(c):
                    yield e
            except ModelAuthenticationError:
                pass

    agent = Agent(name="bot", system_prompt="p", model=ScriptedChatModel([]), middlewares=[Short()])
    with pytest.raises(ConfigError, match="REPLY_END"):
        await agent.reply(UserMsg("user", "x"))
    assert agent.state.context == []
    model = ScriptedChatModel([ModelAuthenticationError("bad key"), AssistantMsg("a", "ok")])
    agent = Agent(name="bot", system_prompt="p", model=model, middlewares=[Swallow()])
    with pytest.raises(ConfigError, match="Swallow"):
        await agent.reply(UserMsg("user", "x"))
    assert (
        await Agent(name="bot", system_prompt="p", model=model, state=agent.state).reply(None)
    ).get_text_content() == "ok"


@pytest.mark.parametrize("swallow", [True, False])
async def test_a_reasoning_hook_that_skips_the_step_is_an_error_not_a_loop(swallow: bool) -> None:
    from tether.errors import ConfigError, ModelAuthenticationError

    class SkipStep(MiddlewareBase):
        async def on_reasoning(self, c, call_next):
            if swallow:
                try:
                    async for e in call_next(c):
                        yield e
                except ModelAuthenticationError:
                    return
            else:
                yield CustomEvent(reply_id=c.reply_id, name="skipped")

    model = ScriptedChatModel([ModelAuthenticationError("bad key")] * 3)
    agent = Agent(name="bot", system_prompt="p", model=model, middlewares=[SkipStep()])
    with pytest.raises(ConfigError, match="on_reasoning"):
        await agent.reply(UserMsg("user", "x"))
    assert len(model.calls) == (1 if swallow else 0)
    assert agent.state.reply is not None and agent.state.reply.iteration == 0


async def test_an_acting_hook_rewrites_the_input_but_not_the_record() -> None:
    ran: list[int] = []

    @tool
    def work(n: int) -> str:
        """Work."""
        ran.append(n)
        return f"worked {n}"

    class Rewrites(MiddlewareBase):
        async def on_acting(self, c, call_next):
            renamed = c.tool_call.model_copy(
                update={"id": "other", "name": "other", "input": '{"n": 2}'}
            )
            async for e in call_next(dataclasses.replace(c, tool_call=renamed)):
                yield e

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("work", {"n": 1}, id="w1")]), AssistantMsg("a", "ok")]
    )
    agent = Agent(
        name="bot",
        system_prompt="p",
        model=model,
        toolkit=Toolkit(tools=[work]),
        middlewares=[Rewrites()],
    )
    final = await agent.reply(UserMsg("user", "x"))
    assert ran == [2]  # the rewritten input ran, once
    assert [(r.id, r.name, r.get_text()) for r in final.tool_results] == [
        ("w1", "work", "worked 2")
    ]
    assert final.tool_calls[0].input == '{"n": 1}'  # the context keeps the model's call


async def test_hooks_run_in_a_resumed_reply() -> None:
    from tether.event import ConfirmResult, UserConfirmResultEvent

    @tool(requires_confirmation=True)
    def deploy() -> str:
        """Deploy."""
        return "deployed"

    log: list[str] = []
    model = ScriptedChatModel(
        [AssistantMsg("a", [call("deploy", id="d1")]), AssistantMsg("a", "ok")]
    )
    agent = Agent(
        name="bot",
        system_prompt="base",
        model=model,
        toolkit=Toolkit(tools=[deploy]),
        middlewares=[Recorder("mw", log)],
    )
    pause = [e async for e in agent.reply_stream(UserMsg("user", "x"))][-1]
    log.clear()
    await agent.reply(
        UserConfirmResultEvent(
            reply_id=pause.reply_id,
            confirm_results=[ConfirmResult(confirmed=True, tool_call=pause.tool_calls[0])],
        )
    )
    assert log == ["mw reply in", "mw acting deploy", "mw reasoning 2", "mw reply out"]
    assert model.calls[1].messages[0].get_text_content() == "base [mw]"


async def test_a_middleware_is_asked_about_the_hooks_it_implements_only() -> None:
    asked: list[str] = []

    class Idle(MiddlewareBase):  # overrides no hook: skipped without asking anything
        @property
        def is_active(self) -> bool:
            asked.append(type(self).__name__)
            return True

    class Prompting(Idle):  # a subclass adds one hook: only that hook consults it
        async def on_system_prompt(self, prompt, c):
            return f"{prompt} [p]"

    def agent(mw: MiddlewareBase) -> tuple[Agent, ScriptedChatModel]:
        model = ScriptedChatModel([AssistantMsg("a", [call("ping")]), AssistantMsg("a", "done")])
        return Agent("bot", "base", model, Toolkit(tools=[ping]), middlewares=[mw]), model

    idle, _ = agent(Idle())
    assert (await idle.reply(UserMsg("user", "x"))).get_text_content() == "done"
    assert asked == []
    prompting, model = agent(Prompting())
    await prompting.reply(UserMsg("user", "x"))
    assert asked == ["Prompting", "Prompting"]  # one system prompt per reasoning step
    assert model.calls[1].messages[0].get_text_content() == "base [p]"
