"""A model step with pending calls and its batch's claim: one write, where nothing awaits between.

The step's save point is deferred to the acting step's first one (the claim, a refused
call's result, or the pause) only when nothing outside the loop can run in between: no
`on_check_permission` or `on_reasoning` hook, no tool source, only our own permission
checks, and the step's MODEL_CALL_END held back until the merged write is done.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import pytest
from pydantic import BaseModel

from tether._loop import drive as drive_module
from tether._loop.run import Run
from tether.agent import Agent
from tether.event import AgentEvent, EventType
from tether.message import (
    AssistantMsg,
    Msg,
    ToolCallBlock,
    ToolCallState,
    ToolResultBlock,
    UserMsg,
)
from tether.middleware import MiddlewareBase, PermissionCall, ReasoningCall
from tether.model import ChatModelBase, ChatRequest, ScriptedChatModel, TextDelta, ToolCallDelta
from tether.permission import PermissionContext, PermissionDecision
from tether.state import AgentState
from tether.tool import ToolBase, Toolkit, ToolSourceBase, error_result, tool

call = ScriptedChatModel.tool_call
RAN: list[str] = []


@tool(is_concurrency_safe=True)
async def charge(amount: int) -> str:
    """Charge."""
    RAN.append("charge")
    return "charged"


@tool(is_concurrency_safe=True)
async def lookup(item: str) -> str:
    """Look up."""
    RAN.append("lookup")
    return "found"


@tool(requires_confirmation=True)
async def transfer(amount: int) -> str:
    """Transfer."""
    RAN.append("transfer")
    return "sent"


@pytest.fixture(autouse=True)
def _clear() -> None:
    RAN.clear()


def _two_calls() -> list[Any]:
    return [
        AssistantMsg(
            "a", [call("charge", {"amount": 1}, id="c1"), call("lookup", {"item": "x"}, id="c2")]
        ),
        AssistantMsg("a", "done"),
    ]


def _agent(script: list[Any], *extra: ToolBase) -> Agent:
    toolkit = Toolkit(tools=[charge, lookup, transfer, *extra])
    return Agent("a", "p", ScriptedChatModel(script), toolkit)


class Recorder:
    """A checkpoint keeping each stored state (as JSON), and the events around them."""

    def __init__(self, fail_at: int = 0) -> None:
        self.stored: list[AgentState] = []
        self.log: list[str] = []
        self.fail_at = fail_at

    async def __call__(self, state: AgentState) -> None:
        if len(self.stored) + 1 == self.fail_at:
            raise RuntimeError("the store is down")
        self.stored.append(AgentState.model_validate_json(state.model_dump_json()))
        self.log.append("save")

    def calls(self, n: int) -> list[ToolCallBlock]:
        msg = self.stored[n].reply_msg()
        return [] if msg is None else msg.tool_calls

    def first_with_step(self) -> int:
        """The first stored state holding the step's calls."""
        return next(i for i in range(len(self.stored)) if self.calls(i))


def _states(recorder: Recorder, n: int) -> list[str]:
    return [c.state.value for c in recorder.calls(n)]


async def test_the_first_stored_state_with_the_step_has_its_calls_running() -> None:
    recorder = Recorder()
    msg = await _agent(_two_calls()).reply(UserMsg("user", "go"), checkpoint=recorder)
    assert msg.get_text_content() == "done"
    first = recorder.first_with_step()
    assert first == 1  # right after the reply's start: the step and the claim, one write
    assert _states(recorder, first) == ["running", "running"]
    assert all("pending" not in _states(recorder, i) for i in range(len(recorder.stored)))
    assert len(recorder.stored) == 5  # the final model step is written with the end


async def test_with_reply_stream_the_step_event_waits_for_the_merged_write() -> None:
    recorder = Recorder()
    agent = _agent(_two_calls())
    async for event in agent.reply_stream(UserMsg("user", "go"), checkpoint=recorder):
        recorder.log.append(event.type.value)
    first = recorder.first_with_step()
    assert _states(recorder, first) == ["running", "running"]
    end = recorder.log.index(EventType.MODEL_CALL_END.value)
    # Nothing reached the consumer between the step and its (merged) save point.
    assert recorder.log[end - 1] == "save"
    assert recorder.log[: end - 1].count("save") == 1  # only the reply's start before it


async def _event_types(agent: Agent) -> list[str]:
    recorder = Recorder()
    return [
        e.type.value async for e in agent.reply_stream(UserMsg("user", "go"), checkpoint=recorder)
    ]


async def test_merging_keeps_the_events_and_their_order() -> None:
    merged = await _event_types(_agent(_two_calls()))
    hooked = _agent(_two_calls())
    hooked.middlewares = (_PassesChecks(),)
    assert merged == await _event_types(hooked)


class _PassesChecks(MiddlewareBase):
    async def on_check_permission(
        self, call: PermissionCall, call_next: Callable[[PermissionCall], Awaitable[Any]]
    ) -> Any:
        return await call_next(call)


class _WatchesReasoning(MiddlewareBase):
    async def on_reasoning(
        self, call: ReasoningCall, call_next: Callable[[ReasoningCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        async for event in call_next(call):
            yield event


class _Source(ToolSourceBase):
    name = "empty"

    async def list_tools(self, state: AgentState) -> list[ToolBase]:
        return []


@tool
async def audited(item: str) -> str:
    """A tool whose own permission check is the caller's."""
    RAN.append("audited")
    return "ok"


class _Audited(type(audited)):  # type: ignore[misc]
    async def check_permissions(
        self,
        tool_input: dict[str, Any],
        context: PermissionContext,
        tool_state: Any = None,
    ) -> PermissionDecision:
        return await super().check_permissions(tool_input, context, tool_state)


def _hooked(kind: str) -> Agent:
    if kind == "own check":
        custom = _Audited.__new__(_Audited)
        custom.__dict__.update(audited.__dict__)
        script = [
            AssistantMsg("a", [call("audited", {"item": "x"}, id="c1")]),
            AssistantMsg("a", "done"),
        ]
        return _agent(script, custom)
    agent = _agent(_two_calls())
    if kind == "permission hook":
        agent.middlewares = (_PassesChecks(),)
    elif kind == "reasoning hook":
        agent.middlewares = (_WatchesReasoning(),)
    else:
        agent.toolkit.add_source(_Source())
    return agent


@pytest.mark.parametrize("kind", ["permission hook", "reasoning hook", "tool source", "own check"])
async def test_where_something_may_await_the_step_is_saved_on_its_own_first(kind: str) -> None:
    recorder = Recorder()
    msg = await _hooked(kind).reply(UserMsg("user", "go"), checkpoint=recorder)
    assert msg.get_text_content() == "done"
    first = recorder.first_with_step()
    assert set(_states(recorder, first)) == {"pending"}  # the step alone
    assert set(_states(recorder, first + 1)) == {"running"}  # then the claim


async def test_a_refused_call_shares_the_write_with_its_answer() -> None:
    script = [AssistantMsg("a", [call("nosuch", {}, id="c1")]), AssistantMsg("a", "done")]
    recorder = Recorder()
    await _agent(script).reply(UserMsg("user", "go"), checkpoint=recorder)
    first = recorder.first_with_step()
    msg = recorder.stored[first].reply_msg()
    assert msg is not None
    assert [c.state.value for c in msg.tool_calls] == ["finished"]
    assert [b.id for b in msg.content if isinstance(b, ToolResultBlock)] == ["c1"]


async def test_a_call_that_asks_shares_the_write_with_the_pause() -> None:
    script = [AssistantMsg("a", [call("transfer", {"amount": 3}, id="c1")])]
    recorder = Recorder()
    await _agent(script).reply(UserMsg("user", "go"), checkpoint=recorder)
    assert len(recorder.stored) == 2  # the start, then the step with the pause
    assert _states(recorder, 1) == ["asking"]
    assert recorder.stored[1].pending is not None and recorder.stored[1].pending.is_paused


class _Offloader:
    async def offload_messages(self, session_id: str, messages: list[Msg]) -> str:
        return "log"

    async def offload_text(self, session_id: str, name: str, text: str) -> str:
        return "text"


async def test_with_an_offloader_the_step_is_saved_before_a_refused_answer() -> None:
    script = [AssistantMsg("a", [call("nosuch", {}, id="c1")]), AssistantMsg("a", "done")]
    agent = _agent(script)
    agent.offloader = _Offloader()
    recorder = Recorder()
    await agent.reply(UserMsg("user", "go"), checkpoint=recorder)
    first = recorder.first_with_step()
    assert _states(recorder, first) == ["pending"]  # saved before the answer is fitted
    assert _states(recorder, first + 1) == ["finished"]


def _dump(state: AgentState) -> Any:
    return json.loads(state.model_dump_json())


async def test_a_failing_merged_write_rolls_back_to_before_the_model_step() -> None:
    recorder = Recorder(fail_at=2)
    agent = _agent(_two_calls())
    with pytest.raises(RuntimeError, match="the store is down"):
        await agent.reply(UserMsg("user", "go"), checkpoint=recorder)
    assert RAN == []  # no tool ran
    assert len(recorder.stored) == 1
    assert _dump(agent.state) == _dump(recorder.stored[0])  # as of the reply's start
    msg = agent.state.reply_msg()
    assert msg is not None and msg.tool_calls == []


class _Logged(ChatModelBase):
    """Two calls on the first step, then text; logs each call in the recorder's log."""

    def __init__(self, log: list[str]) -> None:
        super().__init__("logged")
        self.log = log

    async def stream(self, request: ChatRequest) -> Any:
        self.log.append("model")
        if any(isinstance(b, ToolResultBlock) for b in request.messages[-1].content):
            yield TextDelta(text="done")
            return
        yield ToolCallDelta(index=0, id="c1", name="charge", arguments='{"amount": 1}')


async def test_drive_writes_a_deferred_save_point_before_the_model_is_called_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    async def act_without_saving(run: Run) -> AsyncIterator[AgentEvent]:
        msg = run.state.reply_msg()
        assert msg is not None
        for c in msg.tool_calls:
            if c.state is ToolCallState.PENDING:
                await run.commit(c, error_result(c, "skipped"))
        return
        yield

    monkeypatch.setattr(drive_module, "act", act_without_saving)
    recorder = Recorder()
    agent = Agent("a", "p", _Logged(recorder.log), Toolkit(tools=[charge]))
    msg = await agent.reply(UserMsg("user", "go"), checkpoint=recorder)
    assert msg.get_text_content() == "done"
    # start, model, (deferred), the deferred write, model, its step with the end
    assert recorder.log == ["save", "model", "save", "model", "save"]
    assert _states(recorder, 1) == ["finished"]


class _LocalAudited(_Audited):
    is_permission_check_local = True  # decides from the arguments alone


def test_overriding_the_check_makes_it_not_local_unless_the_tool_says_so() -> None:
    assert type(audited).is_permission_check_local
    assert not _Audited.is_permission_check_local
    assert _LocalAudited.is_permission_check_local

    class _Child(_LocalAudited):  # inherits the override and the flag together
        pass

    assert _Child.is_permission_check_local


async def test_a_tool_whose_own_check_is_local_shares_the_write_with_the_claim() -> None:
    custom = _LocalAudited.__new__(_LocalAudited)
    custom.__dict__.update(audited.__dict__)
    script = [
        AssistantMsg("a", [call("audited", {"item": "x"}, id="c1")]),
        AssistantMsg("a", "done"),
    ]
    recorder = Recorder()
    msg = await _agent(script, custom).reply(UserMsg("user", "go"), checkpoint=recorder)
    assert msg.get_text_content() == "done"
    assert set(_states(recorder, recorder.first_with_step())) == {"running"}


def _final(recorder: Recorder) -> list[tuple[bool, str]]:
    """(the reply in progress?, its text) of each stored state holding the final answer."""
    out = []
    for state in recorder.stored:
        msg = state.context[-1] if state.context else None
        text = msg.get_text_content() if msg is not None else None
        if msg is not None and msg.role == "assistant" and text and "done" in text:
            out.append((state.reply is not None, text))
    return out


async def test_the_final_model_step_is_written_with_the_end() -> None:
    recorder = Recorder()
    msg = await _agent(_two_calls()).reply(UserMsg("user", "go"), checkpoint=recorder)
    assert msg.get_text_content() == "done"
    assert _final(recorder) == [(False, "done")]  # never stored with the reply in progress


@pytest.mark.parametrize("kind", ["reasoning hook", "tool source"])
async def test_the_final_step_is_saved_on_its_own_when_finishing_could_await(kind: str) -> None:
    recorder = Recorder()
    await _hooked(kind).reply(UserMsg("user", "go"), checkpoint=recorder)
    assert _final(recorder) == [(True, "done"), (False, "done")]


async def test_a_structured_answer_is_saved_before_it_is_checked() -> None:
    class Answer(BaseModel):
        value: int

    script = [AssistantMsg("a", [call("generate_response", {"value": 3}, id="s1")])]
    recorder = Recorder()
    agent = _agent(script)
    msg = await agent.reply(UserMsg("user", "go"), checkpoint=recorder, structured_schema=Answer)
    assert msg.structured_output == Answer(value=3)
    assert [state.reply is not None for state in recorder.stored][-2:] == [True, False]


async def test_with_reply_stream_the_final_step_event_waits_for_the_end_write() -> None:
    recorder = Recorder()
    async for event in _agent(_two_calls()).reply_stream(
        UserMsg("user", "go"), checkpoint=recorder
    ):
        recorder.log.append(event.type.value)
    last_end = len(recorder.log) - 1 - recorder.log[::-1].index(EventType.MODEL_CALL_END.value)
    assert recorder.log[last_end - 1] == "save"  # the merged write, then the step's event
    assert recorder.log[last_end + 1 :] == [EventType.REPLY_END.value]


async def test_a_failing_write_of_the_final_step_and_the_end_rolls_both_back() -> None:
    agent = _agent(_two_calls())
    with pytest.raises(RuntimeError, match="the store is down"):
        await agent.reply(UserMsg("user", "go"), checkpoint=Recorder(fail_at=5))
    assert agent.state.reply is not None  # as last stored: both results in, no answer yet
    assert [c.state for c in agent.state.reply_msg().tool_calls] == [  # type: ignore[union-attr]
        ToolCallState.FINISHED,
        ToolCallState.FINISHED,
    ]
    assert not agent.state.context[-1].get_text_content()
