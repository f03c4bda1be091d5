"""`ReActConfig.max_total_iters`: the reasoning steps of a whole agent tree in one reply,
counted from the state (so across pauses, resumes and fresh loads)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import pytest

from tether.agent import Agent, ReActConfig
from tether.event import (
    ConfirmResult,
    ReplyEndEvent,
    RequireUserConfirmEvent,
    UserConfirmResultEvent,
)
from tether.message import ChatUsage, ToolResultState, UserMsg
from tether.model import (
    ChatModelBase,
    ChatRequest,
    ModelDelta,
    TextDelta,
    ToolCallDelta,
    UsageDelta,
)
from tether.state import AgentState
from tether.tool import Toolkit, tool


class Looper(ChatModelBase):
    """Calls `first` on its first step, then `again` on every step while tools are allowed;
    answers with text once the loop forbids tools. Records each request's tool choice."""

    def __init__(self, name: str, first: tuple[str, str], again: tuple[str, str]) -> None:
        super().__init__(name)
        self.first, self.again = first, again
        self.choices: list[str] = []

    async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
        self.choices.append(str(request.tool_choice))
        yield UsageDelta(usage=ChatUsage(input_tokens=1, output_tokens=1))
        if request.tool_choice == "none":
            yield TextDelta(text=f"{self.model_name} answers")
            return
        name, args = self.first if len(self.choices) == 1 else self.again
        yield ToolCallDelta(index=0, id=f"{self.model_name}{len(self.choices)}", name=name,
                            arguments=args)  # fmt: skip


@tool(is_read_only=True)
async def lookup(item: str) -> str:
    """Look an item up."""
    return f"{item}: 42"


@tool(requires_confirmation=True)
async def publish(text: str) -> str:
    """Publish a text (asks first)."""
    return "published"


def team(limit: int, child_first: str) -> tuple[Agent, Looper, Looper]:
    first = (child_first, json.dumps({"item": "x"} if child_first == "lookup" else {"text": "t"}))
    child_model = Looper("kid", first, ("lookup", '{"item": "y"}'))
    child = Agent("kid", "You dig.", child_model, Toolkit(tools=[lookup, publish]))
    boss_model = Looper("boss", ("kid", '{"task": "dig"}'), ("kid", '{"task": "dig more"}'))
    boss = Agent(
        "boss",
        "You lead.",
        boss_model,
        Toolkit(tools=[child.as_tool()]),
        react_config=ReActConfig(max_total_iters=limit),
    )
    return boss, boss_model, child_model


@pytest.mark.parametrize("streamed", [True, False])
async def test_the_tree_stops_at_the_total_and_the_root_answers(streamed: bool) -> None:
    boss, boss_model, kid_model = team(5, "lookup")
    if streamed:
        events = [e async for e in boss.reply_stream(UserMsg("user", "go"))]
        end = events[-1]
        assert isinstance(end, ReplyEndEvent)
        msg = end.msg
    else:
        msg = await boss.reply(UserMsg("user", "go"))
    # boss step 1 calls kid; kid takes steps 2-5 (each calling lookup), then would take a
    # sixth: it stops with the typed error as its result, which the boss's model reads.
    assert len(kid_model.choices) == 4 and "none" not in kid_model.choices
    [result] = msg.tool_results
    assert result.state is ToolResultState.ERROR
    text = result.get_text()
    assert "TotalIterationsError" in text or "all 5 reasoning steps" in text
    assert "max_total_iters" in text
    assert result.metadata["iterations"] == 4
    # the boss had no step left: one more that must answer (no tools), then the reply ends
    assert boss_model.choices == ["auto", "none"]
    assert msg.get_text_content() == "boss answers"
    assert boss.state.reply is None and boss.state.tool_state == {}


async def test_without_a_limit_nothing_is_counted() -> None:
    boss, _, kid_model = team(5, "lookup")
    boss.react_config = ReActConfig(max_iters=1)
    kid = boss.toolkit.tools["kid"].agent  # type: ignore[attr-defined]
    kid.react_config = ReActConfig(max_iters=6)
    msg = await boss.reply(UserMsg("user", "go"))
    assert len(kid_model.choices) == 7  # six steps calling lookup, one forced answer
    assert all("iterations" not in r.metadata for r in msg.tool_results)


async def test_the_count_survives_a_pause_and_a_fresh_load() -> None:
    boss, _, kid_model = team(4, "publish")
    paused = await boss.reply(UserMsg("user", "go"))  # boss step 1, kid step 2 asks
    [event] = paused.metadata["pause_events"]
    pause = RequireUserConfirmEvent.model_validate(event)
    saved = boss.state.model_dump_json()

    fresh, boss_model, fresh_kid = team(4, "publish")
    fresh_kid.choices = ["auto"]  # the kid's first step was taken before the save
    fresh.state = AgentState.model_validate_json(saved)
    answer = UserConfirmResultEvent(
        reply_id=pause.reply_id,
        confirm_results=[ConfirmResult(confirmed=True, tool_call=c) for c in pause.tool_calls],
    )
    msg = await fresh.reply(answer)
    # Steps 1 and 2 were counted before the pause: after it the kid takes steps 3 and 4,
    # and stops when it would take a fifth; a count that restarted would let it go on.
    assert fresh_kid.choices[1:] == ["auto", "auto"]
    [result] = msg.tool_results
    assert result.state is ToolResultState.ERROR and "all 4 reasoning steps" in result.get_text()
    assert result.metadata["iterations"] == 3
    assert boss_model.choices == ["none"]
    assert len(kid_model.choices) == 1


def test_the_limit_is_checked_at_construction() -> None:
    with pytest.raises(ValueError, match="max_total_iters"):
        ReActConfig(max_total_iters=0)


@pytest.mark.parametrize("concurrent", [True, False])
async def test_siblings_and_a_grandchild_share_one_count(concurrent: bool) -> None:
    one = Looper("one", ("lookup", '{"item": "a"}'), ("lookup", '{"item": "b"}'))
    deep = Looper("deep", ("lookup", '{"item": "e"}'), ("lookup", '{"item": "f"}'))
    grandchild = Agent("deep", "You dig deeper.", deep, Toolkit(tools=[lookup]))
    middle = Looper("mid", ("deep", '{"task": "dig"}'), ("lookup", '{"item": "g"}'))
    kids = [  # the middle one first: run one after the other, it and its child go first
        Agent("mid", "You delegate.", middle, Toolkit(tools=[grandchild.as_tool(), lookup])),
        Agent("one", "You dig.", one, Toolkit(tools=[lookup])),
    ]
    calls = [(kid.name, '{"task": "dig"}') for kid in kids]

    class Both(Looper):
        async def stream(self, request: ChatRequest) -> AsyncIterator[ModelDelta]:
            self.choices.append(str(request.tool_choice))
            if request.tool_choice == "none":
                yield TextDelta(text="boss answers")
                return
            for index, (name, args) in enumerate(calls):
                yield ToolCallDelta(index=index, id=f"b{index}", name=name, arguments=args)

    boss_model = Both("boss", ("", ""), ("", ""))
    tools = [kid.as_tool(concurrency_safe=concurrent) for kid in kids]
    boss = Agent(
        "boss",
        "You lead.",
        boss_model,
        Toolkit(tools=tools),
        react_config=ReActConfig(max_total_iters=8),
    )
    msg = await boss.reply(UserMsg("user", "go"))
    # boss step 1; then 7 steps among mid, deep and one, in whatever order they ran
    assert len(one.choices) + len(middle.choices) + len(deep.choices) == 7
    assert "none" not in one.choices + middle.choices + deep.choices
    assert boss_model.choices == ["auto", "none"]
    results = {r.id: r for r in msg.tool_results}
    assert sum(r.metadata["iterations"] for r in results.values()) == 7
    assert all(r.state is ToolResultState.ERROR for r in results.values())
    if not concurrent:  # mid 1 step, deep the 6 left; one none
        assert (len(middle.choices), len(deep.choices), len(one.choices)) == (1, 6, 0)
        assert (results["b0"].metadata["iterations"], results["b1"].metadata["iterations"]) == (
            7,
            0,
        )
