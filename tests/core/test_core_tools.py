"""Function tools, argument handling, the toolkit, and the model's mistakes as results."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel

from tether.agent import Agent
from tether.errors import ConfigError, DuplicateToolError
from tether.event import CustomEvent, EventType
from tether.message import AssistantMsg, ToolCallBlock, ToolResultState, UserMsg
from tether.model import ScriptedChatModel
from tether.state import AgentState
from tether.tool import ArgumentError, FunctionTool, ToolContext, Toolkit, parse_arguments, tool

call = ScriptedChatModel.tool_call


def test_schema_comes_from_hints_and_docstring() -> None:
    @tool(is_read_only=True, is_concurrency_safe=True)
    def search(query: str, limit: int = 10, *, exact: bool = False) -> list[str]:
        """Search the notes.

        Args:
            query: What to look for.
            limit: At most this many
                results.
            exact: Match whole words only.

        Returns:
            The matching notes.
        """
        return []

    schema = search.json_schema()
    assert schema["name"] == "search"
    assert schema["description"] == "Search the notes."
    props = schema["parameters"]["properties"]
    assert props["query"] == {
        "description": "What to look for.",
        "title": "Query",
        "type": "string",
    }
    assert props["limit"]["description"] == "At most this many results."
    assert props["limit"]["default"] == 10
    assert schema["parameters"]["required"] == ["query"]
    assert search.is_read_only and search.is_concurrency_safe and not search.is_external_tool


def test_names_and_descriptions_can_be_overridden() -> None:
    t = FunctionTool(lambda x: x, name="identity", description="Return x.")
    assert (t.name, t.description) == ("identity", "Return x.")
    with pytest.raises(DuplicateToolError, match="two tools are named 'identity'"):
        Toolkit(tools=[t, FunctionTool(lambda y: y, name="identity")])
    with pytest.raises(ConfigError, match="takes tools or functions"):
        Toolkit(tools=[42])


@pytest.mark.parametrize(
    "raw, expected",
    [
        ("", {}),
        ('{"a": 1}', {"a": 1}),
        ('```json\n{"a": 1}\n```', {"a": 1}),
        ('{"a": 1,}', {"a": 1}),
        ('{"a": [1, 2,],}', {"a": [1, 2]}),
        ('{"a": {"b": 1', {"a": {"b": 1}}),
    ],
)
def test_unambiguous_json_is_repaired(raw: str, expected: dict) -> None:
    assert parse_arguments(raw) == expected


@pytest.mark.parametrize(
    "raw", ["{'a': 1}", "not json", '{"a": "unterminated', "[1, 2]", '{"a": 1}}']
)
def test_ambiguous_json_is_an_error(raw: str) -> None:
    with pytest.raises(ArgumentError):
        parse_arguments(raw)


async def test_the_models_mistakes_become_results_it_can_act_on() -> None:
    @tool
    def add(a: int, b: int) -> int:
        """Add."""
        return a + b

    model = ScriptedChatModel(
        [
            AssistantMsg(
                "a",
                [
                    ToolCallBlock(id="c1", name="add", input='{"a": 1, "b": "two"}'),
                    ToolCallBlock(id="c2", name="add", input='{"a": 1'),
                    ToolCallBlock(id="c3", name="ad", input='{"a": 1, "b": 2}'),
                    ToolCallBlock(id="c4", name="add", input="{'a': 1}"),
                    ToolCallBlock(id="c5", name="add", input='{"a": 1, "b": 2, "c": 3}'),
                ],
            ),
            AssistantMsg("a", "fixed"),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[add]))
    final = await agent.reply(UserMsg("user", "x"))
    r = {x.id: x for x in final.tool_results}
    assert all(x.state is ToolResultState.ERROR for x in r.values())
    assert "`b`" in r["c1"].output and "integer" in r["c1"].output
    assert (
        "`b`" in r["c2"].output and "Field required" in r["c2"].output
    )  # repaired, then validated
    assert "no tool named 'ad'" in r["c3"].output and "Did you mean 'add'?" in r["c3"].output
    assert "Available tools: add" in r["c3"].output
    assert "not valid JSON" in r["c4"].output
    assert "`c`" in r["c5"].output


async def test_sync_tools_run_off_the_event_loop_and_generators_stream() -> None:
    loop_thread = threading.get_ident()
    seen: list[int] = []

    @tool
    def blocking() -> str:
        """Blocking work."""
        seen.append(threading.get_ident())
        return "done"

    @tool
    async def chunks(n: int):
        """Stream n chunks."""
        for i in range(n):
            yield f"part{i} "

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("blocking"), call("chunks", {"n": 3})]), AssistantMsg("a", "ok")]
    )
    agent = Agent(
        name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[blocking, chunks])
    )
    events = [e async for e in agent.reply_stream(UserMsg("user", "x"))]
    assert seen and seen[0] != loop_thread
    deltas = [e.delta for e in events if e.type is EventType.TOOL_RESULT_TEXT_DELTA]
    assert deltas == ["part0 ", "part1 ", "part2 "]
    assert events[-1].msg.tool_results[1].output == "part0 part1 part2 "


async def test_two_agents_share_a_toolkit_and_model_concurrently() -> None:
    gate = asyncio.Event()

    @tool(is_concurrency_safe=True)
    async def wait_for_both(who: str) -> str:
        """Wait."""
        if who == "A":
            await gate.wait()
        else:
            gate.set()
        return who

    toolkit = Toolkit(tools=[wait_for_both])

    def script(who: str):
        return [
            AssistantMsg("a", [call("wait_for_both", {"who": who})]),
            AssistantMsg("a", f"done {who}"),
        ]

    a = Agent(name="a", system_prompt="p", model=ScriptedChatModel(script("A")), toolkit=toolkit)
    b = Agent(name="b", system_prompt="p", model=ScriptedChatModel(script("B")), toolkit=toolkit)
    ra, rb = await asyncio.wait_for(
        asyncio.gather(a.reply(UserMsg("u", "x")), b.reply(UserMsg("u", "y"))), timeout=10
    )
    assert (ra.get_text_content(), rb.get_text_content()) == ("done A", "done B")
    assert (
        a.state.context[0].get_text_content() == "x"
        and b.state.context[0].get_text_content() == "y"
    )
    assert toolkit.tools.keys() == {"wait_for_both"}  # nothing was added to the shared toolkit


async def test_assigning_state_switches_sessions_fully() -> None:
    model = ScriptedChatModel([AssistantMsg("a", "one"), AssistantMsg("a", "two")])
    agent = Agent(name="bot", system_prompt="p", model=model)
    first = agent.state
    await agent.reply(UserMsg("user", "in session 1"))
    agent.state = AgentState()
    await agent.reply(UserMsg("user", "in session 2"))
    assert [m.get_text_content() for m in model.calls[1].messages[1:2]] == ["in session 2"]
    assert len(first.context) == 2 and len(agent.state.context) == 2


async def test_structured_output() -> None:
    class Answer(BaseModel):
        city: str
        population: int

    model = ScriptedChatModel(
        [
            AssistantMsg("a", "Paris has about two million people."),  # forgot the tool: reminded
            AssistantMsg("a", [call("generate_response", {"city": "Paris", "population": "many"})]),
            AssistantMsg(
                "a", [call("generate_response", {"city": "Paris", "population": 2100000})]
            ),
        ]
    )
    agent = Agent(name="bot", system_prompt="p", model=model)
    msg = await agent.reply(UserMsg("user", "Paris?"), structured_schema=Answer)
    assert msg.metadata["structured_output"] == {"city": "Paris", "population": 2100000}
    assert model.calls[1].tool_choice.name == "generate_response"
    assert "generate_response" in model.calls[1].messages[-1].content[-1].hint
    assert "`population`" in msg.tool_results[0].output  # the invalid try was explained
    assert [t["name"] for t in model.calls[0].tools] == ["generate_response"]
    model.assert_complete()


async def test_scripted_model_takes_callables() -> None:
    def answer(request):
        # The last message is the user's: the reply in progress has no block yet.
        return AssistantMsg("a", f"you said {request.messages[-1].get_text_content()}")

    async def later(request):
        return AssistantMsg("a", f"{len(request.messages)} messages")

    model = ScriptedChatModel([answer, later])
    agent = Agent(name="bot", system_prompt="p", model=model)
    assert (await agent.reply(UserMsg("user", "hello"))).get_text_content() == "you said hello"
    assert (await agent.reply(UserMsg("user", "again"))).get_text_content() == "4 messages"


async def test_a_lone_tools_events_stream_while_it_runs() -> None:
    gate = asyncio.Event()

    @tool
    async def long_job(context: ToolContext) -> str:
        """Report progress, then wait to be released."""
        await context.emit(
            CustomEvent(reply_id=context.reply_id, name="progress", data={"pct": 10})
        )
        await gate.wait()
        return "finished"

    model = ScriptedChatModel([AssistantMsg("a", [call("long_job")]), AssistantMsg("a", "ok")])
    agent = Agent(name="bot", system_prompt="p", model=model, toolkit=Toolkit(tools=[long_job]))

    async def consume() -> list:
        seen = []
        async for event in agent.reply_stream(UserMsg("user", "x")):
            seen.append(event.type)
            if event.type is EventType.CUSTOM:
                gate.set()  # only reachable if progress arrives before the result
        return seen

    seen = await asyncio.wait_for(consume(), timeout=10)
    assert long_job.takes_context
    assert seen.index(EventType.CUSTOM) < seen.index(EventType.TOOL_RESULT_END)


@pytest.mark.parametrize(
    "value, text",
    [
        (3, "3"),
        (-7, "-7"),
        (True, "true"),
        (1.5, "1.5"),
        ({"a": [1, None]}, '{"a": [1, null]}'),
        ([], "[]"),
        (None, ""),
    ],
)
def test_tool_return_values_become_json_text(value, text: str) -> None:
    from tether.tool import to_result

    call = ToolCallBlock(id="c", name="t")
    assert to_result(call, value).output == text
