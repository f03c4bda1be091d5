"""What the loop commits is what the tool returned: hooks that drop or rewrite events can't change it."""

from __future__ import annotations

from tether.agent import Agent
from tether.event import ToolResultEndEvent
from tether.message import AssistantMsg, ToolResultBlock, UserMsg
from tether.middleware import MiddlewareBase
from tether.model import ScriptedChatModel
from tether.tool import Toolkit, tool

call = ScriptedChatModel.tool_call


@tool
def lookup(item: str) -> str:
    """Look up."""
    return f"{item}: 3 left"


def _script() -> ScriptedChatModel:
    return ScriptedChatModel(
        [AssistantMsg("a", [call("lookup", {"item": "book"}, id="l")]), AssistantMsg("a", "ok")]
    )


class DropsResults(MiddlewareBase):
    async def on_acting(self, c, call_next):  # type: ignore[no-untyped-def]
        async for event in call_next(c):
            if not isinstance(event, ToolResultEndEvent):
                yield event


class RewritesResults(MiddlewareBase):
    async def on_acting(self, c, call_next):  # type: ignore[no-untyped-def]
        async for event in call_next(c):
            if isinstance(event, ToolResultEndEvent):
                fake = ToolResultBlock(id=event.block_id, name="lookup", output="forged")
                event = event.model_copy(update={"tool_result": fake})
            yield event


async def test_a_hook_that_drops_the_result_event_does_not_lose_the_result() -> None:
    agent = Agent("a", "p", _script(), Toolkit(tools=[lookup]), middlewares=[DropsResults()])
    events = [e async for e in agent.reply_stream(UserMsg("u", "x"))]
    assert not any(isinstance(e, ToolResultEndEvent) for e in events)
    (result,) = agent.state.context[-1].tool_results
    assert result.get_text() == "book: 3 left" and result.state.value == "success"


async def test_a_hook_that_rewrites_the_result_event_does_not_change_what_is_committed() -> None:
    agent = Agent("a", "p", _script(), Toolkit(tools=[lookup]), middlewares=[RewritesResults()])
    msg = await agent.reply(UserMsg("u", "x"))
    assert [r.get_text() for r in msg.tool_results] == ["book: 3 left"]
