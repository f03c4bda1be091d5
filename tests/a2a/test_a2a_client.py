"""`A2AAgent` against a remote agent built on a2a-sdk's own server classes: delegation,
nested streaming, a remote question that pauses the parent and is answered in a fresh
process, cancel on interrupt, and typed errors for bad credentials and dead URLs."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import a2a_parent
import httpx
import pytest
import remote_server
from a2a.client import ClientConfig, create_client
from a2a.types import Message, Part, Role, SendMessageRequest
from remote_server import QUESTION, REPORT, SECOND, TOKEN, Seen, ThreadServer

from tether.agent import A2AAgent, Agent, pending_calls
from tether.credential import A2ACredential
from tether.errors import A2AAuthenticationError, A2AConnectionError, ConfigError, ResumeError
from tether.event import (
    AgentEvent,
    ConfirmResult,
    CustomEvent,
    RequireUserConfirmEvent,
    SubAgentEvent,
    TextBlockDeltaEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import AssistantMsg, ToolCallState, UserMsg
from tether.model import ScriptedChatModel
from tether.permission import PermissionContext, PermissionMode, PermissionRule
from tether.state import AgentState
from tether.tool import Toolkit

WORKER = str(Path(__file__).with_name("a2a_parent.py"))


@pytest.fixture
def remote() -> Iterator[tuple[str, Seen]]:
    seen = Seen()
    holder = [""]
    with ThreadServer(remote_server.app(holder, seen)) as server:
        holder[0] = server.url
        yield server.url, seen
        seen.release.set()  # a task still waiting for it ends


def run_worker(config: dict[str, Any]) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, WORKER, json.dumps(config)],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    out: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return out


async def first_run(url: str) -> tuple[Any, list[AgentEvent]]:
    lead = a2a_parent.parent(url)
    events = [e async for e in lead.reply_stream(UserMsg("user", "tidy up"))]
    return lead, events


@pytest.mark.parametrize("approve", [True, False])
async def test_remote_question_pauses_the_parent_and_is_answered_in_a_fresh_process(
    remote: tuple[str, Seen], tmp_path: Path, approve: bool
) -> None:
    url, seen = remote
    lead, events = await first_run(url)

    nested = [e for e in events if isinstance(e, SubAgentEvent)]
    assert nested and {tuple(e.agent_path) for e in nested} == {("cleaner",)}
    assert {tuple(e.call_path) for e in nested} == {("c1",)}
    kinds = [e.event.type.value for e in nested]
    assert kinds[0] == "reply_start" and kinds[-1] == "require_user_confirm"
    streamed = "".join(e.event.delta for e in nested if isinstance(e.event, TextBlockDeltaEvent))
    assert f"Looking at: {a2a_parent.TASK}" in streamed
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    [question] = pause.tool_calls
    assert question.id == "c1/q1" and question.metadata["agent_path"] == ["cleaner"]
    assert json.loads(question.input)["question"] == QUESTION
    assert seen.texts == [a2a_parent.TASK]

    saved = tmp_path / "state.json"
    saved.write_text(lead.state.model_dump_json())
    asking, _ = pending_calls(lead.state)
    assert [c.id for c in asking] == ["c1/q1"]
    record = lead.state.tool_state["cleaner"]["c1"]
    assert record["a2a"]["task_id"] and record["a2a"]["context_id"]
    assert lead.state.reply_msg() is not None
    [call] = lead.state.reply_msg().tool_calls  # type: ignore[union-attr]
    assert call.state is ToolCallState.SUBMITTED

    out = run_worker({
        "url": url, "state": str(saved), "pause": pause.model_dump(mode="json"),
        "approve": approve, "reason": None if approve else "keep them",
    })  # fmt: skip

    assert out["final"] == "The cleaner is done." and not out["paused"]
    outcome = "Deleted 3 files." if approve else "Kept the files."
    assert out["results"] == [{"output": outcome, "state": "success"}]
    assert out["tool_state"] == {}  # the record is gone with the finished task
    expected: dict[str, Any] = {"approved": approve}
    if not approve:
        expected["reason"] = "keep them"
    assert seen.answers == [{"data": [expected], "text": ["yes" if approve else "no"]}]


async def test_credentials_are_sent_and_a_refused_key_is_a_typed_error(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    lead = a2a_parent.parent(url, token="wrong")
    with pytest.raises(A2AAuthenticationError, match="A2ACredential"):
        await lead.reply(UserMsg("user", "tidy up"))
    assert seen.auth == ["Bearer wrong"] and seen.texts == []


async def test_an_unreachable_agent_is_a_typed_error() -> None:
    remote = A2AAgent("http://127.0.0.1:9/")  # the discard port: nothing listens
    with pytest.raises(A2AConnectionError, match="agent-card.json"):
        await remote.card()


async def test_an_unreachable_agent_is_an_error_result_the_model_reads(tmp_path: Path) -> None:
    lead = a2a_parent.parent("http://127.0.0.1:9")
    final = await lead.reply(UserMsg("user", "tidy up"))
    assert final.get_text_content() == "The cleaner is done."
    [result] = [b for m in lead.state.context for b in m.content if b.type == "tool_result"]
    assert result.state.value == "error" and "A2AConnectionError" in str(result.output)
    assert lead.state.tool_state.get("cleaner", {}) == {}


async def test_interrupting_the_parent_cancels_the_remote_task(remote: tuple[str, Seen]) -> None:
    url, seen = remote
    lead = a2a_parent.parent(url, task="a slow clean-up")
    stream = lead.reply_stream(UserMsg("user", "slow clean"))
    async for event in stream:
        if isinstance(event, SubAgentEvent) and isinstance(event.event, TextBlockDeltaEvent):
            break  # the remote agent is working: the user stops the reply here
    await stream.aclose()  # type: ignore[attr-defined]
    assert seen.cancelled_event.wait(timeout=20)
    assert len(seen.cancelled) == 1 and seen.texts == ["a slow clean-up"]
    assert lead.state.tool_state.get("cleaner", {}) == {}  # no record left behind


async def test_interrupting_a_parent_paused_on_a_remote_question_cancels_the_task(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    lead, events = await first_run(url)
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    task_id = lead.state.tool_state["cleaner"]["c1"]["a2a"]["task_id"]

    final = await lead.reply(UserInterruptEvent(reply_id=pause.reply_id))

    assert seen.cancelled == [task_id]
    assert lead.state.reply is None and lead.state.tool_state.get("cleaner", {}) == {}
    [result] = [b for m in lead.state.context for b in m.content if b.type == "tool_result"]
    assert result.state.value == "interrupted"
    assert final.metadata.get("awaiting") is None


async def test_a_data_artifact_is_the_structured_result(remote: tuple[str, Seen]) -> None:
    url, seen = remote
    lead = a2a_parent.parent(url, task="file a report")
    events = [e async for e in lead.reply_stream(UserMsg("user", "report"))]
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    answer = ConfirmResult(confirmed=True, tool_call=pause.tool_calls[0])
    events = [
        e
        async for e in lead.reply_stream(
            UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[answer])
        )
    ]
    [end] = [
        e.event
        for e in events
        if isinstance(e, SubAgentEvent) and e.event.type.value == "reply_end"
    ]
    assert end.msg.metadata["structured_output"] == REPORT  # type: ignore[union-attr]
    assert end.msg.usage is None  # type: ignore[union-attr]  # unknown remotely, not zero
    [result] = [b for m in lead.state.context for b in m.content if b.type == "tool_result"]
    assert json.loads(str(result.output)) == REPORT
    assert result.metadata["usage"].startswith("unknown")


async def test_a_direct_message_answer_is_the_result(remote: tuple[str, Seen]) -> None:
    url, _ = remote
    lead = a2a_parent.parent(url, task="hello there")
    final = await lead.reply(UserMsg("user", "greet"))
    assert final.get_text_content() == "The cleaner is done."
    [result] = [b for m in lead.state.context for b in m.content if b.type == "tool_result"]
    assert result.output == "Hello from the cleaner." and result.state.value == "success"


async def test_a_second_question_pauses_again_with_a_new_id(remote: tuple[str, Seen]) -> None:
    url, seen = remote
    lead = a2a_parent.parent(url, task="clean twice")
    events = [e async for e in lead.reply_stream(UserMsg("user", "clean"))]
    ids = []
    for _ in range(2):
        [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
        [question] = pause.tool_calls
        ids.append((question.id, json.loads(question.input)["question"]))
        lead.state = AgentState.model_validate_json(lead.state.model_dump_json())
        answer = ConfirmResult(confirmed=True, tool_call=question)
        resume = UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[answer])
        events = [e async for e in lead.reply_stream(resume)]
    assert ids == [("c1/q1", QUESTION), ("c1/q2", SECOND)]
    assert lead.state.reply is None and len(seen.answers) == 2 and seen.texts == ["clean twice"]


async def test_a_call_found_running_looks_at_its_task_and_never_sends_it_twice(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    lead, _ = await first_run(url)
    # As if the process died while the remote task streamed: the call is RUNNING and its
    # record holds the task's ids (saved when first seen), no question yet.
    state = json.loads(lead.state.model_dump_json())
    record = state["tool_state"]["cleaner"]["c1"]
    del record["state"]
    for msg in state["context"]:
        for block in msg["content"] if isinstance(msg["content"], list) else []:
            if block["type"] == "tool_call":
                block["state"] = "running"
    lead.state = AgentState.model_validate(state)

    events = [e async for e in lead.reply_stream(None)]

    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    assert [c.id for c in pause.tool_calls] == ["c1/q2"]
    assert json.loads(pause.tool_calls[0].input)["question"] == QUESTION
    assert seen.texts == [a2a_parent.TASK]  # the task was sent once


async def test_an_edited_input_answers_in_free_text(remote: tuple[str, Seen]) -> None:
    url, seen = remote
    lead, events = await first_run(url)
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    [question] = pause.tool_calls
    shown = json.loads(question.input)
    edited = question.model_copy(update={"input": json.dumps({**shown, "answer": "only PDFs"})})
    answer = ConfirmResult(confirmed=True, tool_call=edited)
    await lead.reply(UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[answer]))
    assert seen.answers == [
        {"data": [{"approved": True, "answer": "only PDFs"}], "text": ["only PDFs"]}
    ]
    assert lead.state.reply is None


async def test_rules_sent_with_an_answer_to_a_remote_question_are_refused(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    lead, events = await first_run(url)
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    before = lead.state.model_dump_json()
    rule = PermissionRule(tool_name="input_required")
    answer = ConfirmResult(confirmed=True, tool_call=pause.tool_calls[0], rules=[rule])
    with pytest.raises(ResumeError):
        await lead.reply(UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[answer]))
    assert lead.state.model_dump_json() == before and seen.answers == []


async def test_a_remote_agent_under_a_local_sub_agent_pauses_the_top_parent(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    helper = a2a_parent.parent(url)  # the lead of the other tests, now a sub-agent
    helper.name = "helper"
    call = ScriptedChatModel.tool_call("helper", {"task": "tidy"}, id="h1")
    top = Agent(
        name="top",
        system_prompt="You delegate to the helper.",
        model=ScriptedChatModel([AssistantMsg("top", [call]), AssistantMsg("top", "All tidy.")]),
        toolkit=Toolkit(tools=[helper.as_tool()]),
    )
    top.state.permission_context = PermissionContext(mode=PermissionMode.BYPASS)
    events = [e async for e in top.reply_stream(UserMsg("user", "go"))]
    paths = {tuple(e.agent_path) for e in events if isinstance(e, SubAgentEvent)}
    assert ("helper", "cleaner") in paths
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    [question] = pause.tool_calls
    assert question.id == "h1/c1/q1" and question.metadata["agent_path"] == ["helper", "cleaner"]

    top.state = AgentState.model_validate_json(top.state.model_dump_json())
    answer = ConfirmResult(confirmed=True, tool_call=question)
    final = await top.reply(
        UserConfirmResultEvent(reply_id=pause.reply_id, confirm_results=[answer])
    )
    assert final.get_text_content() == "All tidy."
    assert [a["data"] for a in seen.answers] == [[{"approved": True}]]


def test_the_agent_checks_its_url_and_names_itself() -> None:
    with pytest.raises(ConfigError, match="http"):
        A2AAgent("files.example.com/agent")
    assert A2AAgent("https://x.example.com/a2a/clean-up/").name == "clean-up"
    assert A2AAgent("https://x.example.com").name == "x_example_com"
    remote = A2AAgent(
        "https://x.example.com",
        credential=A2ACredential(api_key="k1"),
        headers={"X-Team": "blue"},
    )
    assert remote.headers() == {"Authorization": "Bearer k1", "X-Team": "blue"}
    assert "k1" not in repr(remote)


async def test_interrupting_the_top_parent_cancels_a_remote_task_under_a_sub_agent(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    helper = a2a_parent.parent(url)
    helper.name = "helper"
    call = ScriptedChatModel.tool_call("helper", {"task": "tidy"}, id="h1")
    top = Agent(
        name="top",
        system_prompt="You delegate to the helper.",
        model=ScriptedChatModel([AssistantMsg("top", [call]), AssistantMsg("top", "Stopped.")]),
        toolkit=Toolkit(tools=[helper.as_tool()]),
    )
    top.state.permission_context = PermissionContext(mode=PermissionMode.BYPASS)
    events = [e async for e in top.reply_stream(UserMsg("user", "go"))]
    [pause] = [e for e in events if isinstance(e, RequireUserConfirmEvent)]
    child = AgentState.model_validate(top.state.tool_state["helper"]["h1"]["state"])
    task_id = child.tool_state["cleaner"]["c1"]["a2a"]["task_id"]

    await top.reply(UserInterruptEvent(reply_id=pause.reply_id))

    assert seen.cancelled == [task_id] and top.state.reply is None


async def test_a_call_found_running_on_a_working_task_follows_it_to_its_end(
    remote: tuple[str, Seen],
) -> None:
    url, seen = remote
    # A task that works on (created here; as if the parent's process died mid-stream).
    async with httpx.AsyncClient(headers={"authorization": f"Bearer {TOKEN}"}) as http:
        config = ClientConfig(httpx_client=http, streaming=False)
        client = await create_client(url, config)
        text = Message(message_id="m1", role=Role.ROLE_USER, parts=[Part(text="finish later")])
        request = SendMessageRequest(message=text)
        request.configuration.return_immediately = True
        [first] = [r async for r in client.send_message(request)]
        await client.close()
    lead, _ = await first_run(url)
    state = json.loads(lead.state.model_dump_json())
    record = state["tool_state"]["cleaner"]["c1"]
    del record["state"]
    record["a2a"].update(task_id=first.task.id, context_id=first.task.context_id)
    for msg in state["context"]:
        for block in msg["content"] if isinstance(msg["content"], list) else []:
            if block["type"] == "tool_call":
                block["state"] = "running"
    lead.state = AgentState.model_validate(state)

    states = []
    async for event in lead.reply_stream(None):
        inner = event.event if isinstance(event, SubAgentEvent) else None
        if isinstance(inner, CustomEvent) and inner.name == "a2a.status":
            states.append(inner.data["state"])
            seen.release.set()  # it is followed again: let it finish

    assert states[0] == "working" and states[-1] == "completed"
    results = [b for m in lead.state.context for b in m.content if b.type == "tool_result"]
    assert [(r.output, r.state.value) for r in results] == [("Finished later.", "success")]
    assert seen.texts == ["finish later", a2a_parent.TASK]  # nothing sent again
