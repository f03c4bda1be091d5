"""Sub-agents nested by state: the loop's side of a call that runs another agent.

A sub-agent's call keeps a *record* in the calling tool's `tool_state` entry, under the
call's id: `{"subagent": name, "state": <the child's AgentState as JSON>, "resume": <a
resume event for the child, once answered>}`. The loop never runs a child itself; it
only reads and writes records:

- a child that paused leaves its call SUBMITTED (`delegated`): the parent pauses, and its
  pause events list the child's waiting calls, ids qualified by the call path
  (`parent_call/child_call`), `metadata["agent_path"]` naming the agents (`expand`);
- an interrupted reply forgets its records, telling a tool that keeps something outside
  the state first (a remote agent's task: `release_records`);
- a resume event's answers with a qualified id are routed to the child's record
  (`route`): validated against the child's state, stored as the child's resume event, and
  the parent's call is set ALLOWED, so the next acting step runs it again and the child
  resumes from its record;
- a child's save points are its parent's (`parent_run`): the child's tool writes its
  record and awaits the parent's checkpoint, one write for the whole tree.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from tether._loop.pause import validate_resume, waiting_calls
from tether.event import (
    ConfirmResult,
    ExternalExecutionResultEvent,
    ResumeEvent,
    UserConfirmResultEvent,
    UserInterruptEvent,
)
from tether.message import ToolCallBlock, ToolCallState, ToolResultBlock, detached
from tether.state import AgentState
from tether.tool import ToolBase

if TYPE_CHECKING:
    from tether._loop.run import Run

__all__ = [
    "MARK",
    "NestingTool",
    "Routed",
    "child_state",
    "delegated",
    "drop_records",
    "expand",
    "parent_run",
    "record_of",
    "registered",
    "release_records",
    "route",
]

MARK = "subagent"
"""The key that makes a `tool_state` value a sub-agent's record (it holds the agent's name)."""
SEP = "/"
"""Joins the ids of a qualified call: `parent_call/child_call[/grandchild_call]`."""
_RUNS: dict[int, Run] = {}


@runtime_checkable
class NestingTool(Protocol):
    """A tool that runs a sub-agent (`Agent.as_tool`): the loop asks it for the child's tools."""

    nests_agent: bool

    async def child_tools(self, state: AgentState) -> Mapping[str, ToolBase]:
        """The child's tools for its state (to check the rules a confirmation carries)."""
        ...


def record_of(state: AgentState, call: ToolCallBlock) -> dict[str, Any] | None:
    """The sub-agent record of `call`, if its tool keeps one."""
    entry = state.tool_state.get(call.name)
    if not entry:
        return None
    record = entry.get(call.id)
    if type(record) is dict and MARK in record:
        return record
    return None


def child_state(record: dict[str, Any]) -> AgentState:
    """The child's state as its record holds it."""
    return AgentState.model_validate(record["state"])


def delegated(state: AgentState, call: ToolCallBlock) -> bool:
    """Whether `call` waits on its sub-agent: a record whose child's reply is paused."""
    record = record_of(state, call)
    if record is None or "state" not in record or record.get("resume") is not None:
        return False
    reply = record["state"].get("reply")
    return reply is not None


def _qualified(call: ToolCallBlock, ids: tuple[str, ...], path: tuple[str, ...]) -> ToolCallBlock:
    if not ids:
        return call
    copy = detached(call)
    copy.id = SEP.join((*ids, call.id))
    copy.metadata["agent_path"] = list(path)
    return copy


def expand(
    state: AgentState,
    asking: Sequence[ToolCallBlock],
    submitted: Sequence[ToolCallBlock],
    ids: tuple[str, ...] = (),
    path: tuple[str, ...] = (),
) -> tuple[list[ToolCallBlock], list[ToolCallBlock]]:
    """The calls a pause waits for, each delegated call replaced by its child's (qualified)."""
    out_asking = [_qualified(c, ids, path) for c in asking]
    out_submitted: list[ToolCallBlock] = []
    for call in submitted:
        record = record_of(state, call)
        if record is None or not delegated(state, call):
            out_submitted.append(_qualified(call, ids, path))
            continue
        child = child_state(record)
        a, s = expand(
            child,
            list(waiting_calls(child, ToolCallState.ASKING).values()),
            list(waiting_calls(child, ToolCallState.SUBMITTED).values()),
            (*ids, call.id),
            (*path, str(record[MARK])),
        )
        out_asking += a
        out_submitted += s
    return out_asking, out_submitted


Routed = tuple[ToolCallBlock, dict[str, Any], ResumeEvent]
"""A delegated call, its record, and the resume event for its child."""


def _split(state: AgentState, event: ResumeEvent) -> tuple[ResumeEvent | None, list[Routed]]:
    if isinstance(event, UserInterruptEvent):
        return event, []
    items: Sequence[ConfirmResult | ToolResultBlock]
    if isinstance(event, UserConfirmResultEvent):
        items = event.confirm_results
    else:
        items = event.execution_results

    def id_of(item: ConfirmResult | ToolResultBlock) -> str:
        return item.tool_call.id if isinstance(item, ConfirmResult) else item.id

    if not any(SEP in id_of(item) for item in items):
        return event, []
    calls = waiting_calls(state, ToolCallState.SUBMITTED)
    own: list[Any] = []
    per_call: dict[str, list[Any]] = {}
    for item in items:
        head, sep, rest = id_of(item).partition(SEP)
        call = calls.get(head) if sep else None
        if call is None or not delegated(state, call):
            own.append(item)
        elif isinstance(item, ConfirmResult):
            tool_call = item.tool_call.model_copy(update={"id": rest})
            per_call.setdefault(head, []).append(item.model_copy(update={"tool_call": tool_call}))
        else:
            per_call.setdefault(head, []).append(item.model_copy(update={"id": rest}))
    routed: list[Routed] = []
    for head, answers in per_call.items():
        call = calls[head]
        record = record_of(state, call)
        assert record is not None
        cursor = record["state"]["reply"]
        reply_id = str(cursor["reply_id"])
        child_event: ResumeEvent
        if isinstance(event, UserConfirmResultEvent):
            child_event = UserConfirmResultEvent(reply_id=reply_id, confirm_results=answers)
        else:
            child_event = ExternalExecutionResultEvent(reply_id=reply_id, execution_results=answers)
        routed.append((call, record, child_event))
    if not own:
        return None, routed
    if isinstance(event, UserConfirmResultEvent):
        return event.model_copy(update={"confirm_results": own}), routed
    return event.model_copy(update={"execution_results": own}), routed


async def route(
    state: AgentState, event: ResumeEvent, tools: Mapping[str, ToolBase] | None
) -> tuple[ResumeEvent | None, list[Routed]]:
    """Validate `event` against the whole tree; split it by the calls it answers.

    Returns the parent's own part (None if all of it is for sub-agents) and one resume
    event per delegated call. Raises `ResumeError`; changes nothing.
    """
    if event.reply_id != (state.reply.reply_id if state.reply else None):
        validate_resume(state, event, tools)  # raises the usual error
    own, routed = _split(state, event)
    if own is not None:
        validate_resume(state, own, tools)
    for call, record, child_event in routed:
        tool = tools.get(call.name) if tools is not None else None
        child = child_state(record)
        child_tools = await tool.child_tools(child) if isinstance(tool, NestingTool) else None
        await route(child, child_event, child_tools)
    return own, routed


def drop_records(state: AgentState) -> None:
    """Forget the records of the reply's delegated calls (the reply is being interrupted)."""
    for call in waiting_calls(state, ToolCallState.SUBMITTED).values():
        if record_of(state, call) is not None:
            del state.tool_state[call.name][call.id]


async def release_records(state: AgentState, tools: Mapping[str, ToolBase] | None) -> None:
    """Tell the tools of the reply's delegated calls that it is interrupted, then forget them.

    A tool with a `release(record)` coroutine (a remote agent's: it cancels the remote
    task) is awaited first, at any depth (a child's delegated calls too); it must not raise.
    """
    await _release(state, tools)
    drop_records(state)


async def _release(state: AgentState, tools: Mapping[str, ToolBase] | None) -> None:
    for call in waiting_calls(state, ToolCallState.SUBMITTED).values():
        record = record_of(state, call)
        tool = tools.get(call.name) if tools is not None else None
        if record is None or tool is None:
            continue
        release = getattr(tool, "release", None)
        if release is not None:
            await release(record)
        elif isinstance(tool, NestingTool) and "state" in record:
            child = child_state(record)
            await _release(child, await tool.child_tools(child))


def parent_run(state: AgentState) -> Run | None:
    """The run driving `state`'s acting step, while a sub-agent tool of it runs."""
    return _RUNS.get(id(state))


@contextmanager
def registered(run: Run) -> Iterator[None]:
    """Make `run` findable by its state (`parent_run`) while its tools run."""
    key = id(run.state)
    before = _RUNS.get(key)
    _RUNS[key] = run
    try:
        yield
    finally:
        if before is None:
            _RUNS.pop(key, None)
        else:
            _RUNS[key] = before
