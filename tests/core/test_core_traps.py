"""Public-API traps a user fell into (issue 14/16), each pinned by a test that failed before."""

from __future__ import annotations

import logging
import subprocess
import sys

import pytest
from pydantic import BaseModel

from tether.agent import Agent, ModelConfig
from tether.event import RequireUserConfirmEvent, pause_events_of
from tether.message import AssistantMsg, Msg, SystemMsg, UserMsg
from tether.model import ChatRequest, ScriptedChatModel
from tether.state import AgentState
from tether.tool import FunctionTool, Toolkit, tool

call = ScriptedChatModel.tool_call


def test_tether_tool_is_the_subpackage_and_still_the_decorator() -> None:
    code = (
        "import tether.tool; assert tether.tool.Toolkit.__name__ == 'Toolkit'\n"
        "import tether.tool as t; assert t.FunctionTool.__name__ == 'FunctionTool'\n"
        "from tether import tool\n"
        "@tool\n"
        "def f(x: int) -> int:\n"
        "    '''F.'''\n"
        "    return x\n"
        "@tool(name='g2')\n"
        "def g(x: int) -> int:\n"
        "    '''G.'''\n"
        "    return x\n"
        "from tether.tool import tool as deco, FunctionTool\n"
        "assert isinstance(f, FunctionTool) and g.name == 'g2' and callable(deco)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_every_agent_gets_its_own_default_toolkit() -> None:
    model = ScriptedChatModel([])
    a, b = Agent("a", "p", model), Agent("b", "p", model)

    @tool
    def f() -> str:
        """F."""
        return "f"

    a.toolkit.register(f)
    assert "f" in a.toolkit.tools and "f" not in b.toolkit.tools


async def test_no_system_message_is_shared_between_agents_or_requests() -> None:
    model = ScriptedChatModel([AssistantMsg("a", "1"), AssistantMsg("b", "2")])
    await Agent("a", "same prompt", model).reply(UserMsg("user", "x"))
    first = model.calls[0].messages[0]
    assert isinstance(first, SystemMsg)
    first.content.clear()  # a model (or a middleware) that changes what it was sent
    await Agent("b", "same prompt", model).reply(UserMsg("user", "y"))
    second = model.calls[1].messages[0]
    assert second is not first and second.get_text_content() == "same prompt"


async def test_the_model_never_sees_an_empty_reply_in_progress() -> None:
    seen: list[list[str]] = []

    def answer(request: ChatRequest) -> Msg:
        seen.append([m.role for m in request.messages])
        assert request.messages[-1].get_text_content() == "hello"
        return AssistantMsg("a", "hi")

    await Agent("a", "p", ScriptedChatModel([answer])).reply(UserMsg("user", "hello"))
    assert seen == [["system", "user"]]


class Answer(BaseModel):
    city: str


async def test_the_structured_answer_is_the_validated_instance_and_the_metadata_stays() -> None:
    model = ScriptedChatModel([AssistantMsg("a", [call("generate_response", {"city": "Oslo"})])])
    msg = await Agent("a", "p", model).reply(UserMsg("user", "x"), structured_schema=Answer)
    assert isinstance(msg.structured_output, Answer) and msg.structured_output.city == "Oslo"
    assert msg.metadata["structured_output"] == {"city": "Oslo"}


async def test_the_pause_of_reply_is_available_as_typed_events() -> None:
    @tool(requires_confirmation=True)
    def deploy() -> str:
        """Deploy."""
        return "ok"

    model = ScriptedChatModel([AssistantMsg("a", [call("deploy", {}, id="d")])])
    agent = Agent("a", "p", model, Toolkit(tools=[deploy]))
    msg = await agent.reply(UserMsg("user", "x"))
    (event,) = pause_events_of(msg)
    assert isinstance(event, RequireUserConfirmEvent)
    assert [c.id for c in event.tool_calls] == ["d"]
    assert pause_events_of(Msg.model_validate_json(msg.model_dump_json())) == [event]


def test_model_config_has_no_pydantic_model_config() -> None:
    config = ModelConfig(max_retries=1)
    assert not hasattr(config, "model_config") and not hasattr(ModelConfig, "model_fields")
    with pytest.raises(TypeError):
        ModelConfig(max_retry=1)  # type: ignore[call-arg]  # misspelt: fails at construction


def test_message_subclasses_round_trip_through_json() -> None:
    for msg in (UserMsg("u", "hi"), AssistantMsg("a", "yo"), SystemMsg("s", "be brief")):
        back = Msg.model_validate_json(msg.model_dump_json())
        assert type(back) is type(msg) and back == msg
    state = AgentState()
    state.add_message(UserMsg("u", "hi"))
    loaded = AgentState.model_validate_json(state.model_dump_json())
    assert type(loaded.context[0]) is UserMsg


async def test_a_tool_that_raises_is_logged_with_its_traceback(
    caplog: pytest.LogCaptureFixture,
) -> None:
    @tool
    def broken() -> str:
        """Break."""
        raise RuntimeError("disk on fire")

    model = ScriptedChatModel(
        [AssistantMsg("a", [call("broken", {}, id="b")]), AssistantMsg("a", "sorry")]
    )
    with caplog.at_level(logging.WARNING, logger="tether.tool"):
        msg = await Agent("a", "p", model, Toolkit(tools=[broken])).reply(UserMsg("u", "x"))
    (record,) = [r for r in caplog.records if r.name == "tether.tool"]
    assert record.levelno == logging.WARNING and "broken" in record.getMessage()
    assert record.exc_info is not None and "disk on fire" in str(record.exc_info[1])
    assert "disk on fire" in msg.tool_results[0].get_text()  # the model still sees it


def test_function_tool_flags() -> None:
    assert FunctionTool(lambda: None, name="x", is_idempotent=True).is_idempotent


async def test_the_testing_helpers_are_importable_from_tether_testing() -> None:
    from tether.model import ScriptedChatModel as FromModel
    from tether.testing import RecordingMiddleware, ScriptedChatModel, collect, event_types

    assert ScriptedChatModel is FromModel
    recorder = RecordingMiddleware()
    model = ScriptedChatModel([AssistantMsg("a", "hi")])
    agent = Agent("a", "p", model, middlewares=[recorder])
    events = await collect(agent.reply_stream(UserMsg("u", "x")))
    assert event_types(events)[0] == "reply_start" and event_types(events)[-1] == "reply_end"
    assert recorder.hook_names() == ["on_reply", "on_reasoning", "on_model_call"]
    assert recorder.events == events
    model.assert_complete()
