"""Writing a reply's progress into the state: its start, each step's answer, its end."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel

from tether._ids import new_id
from tether._loop.assign import put
from tether._loop.batch import Commit, interrupt_unfinished
from tether._loop.current import reply_message
from tether._loop.nested import release_records, route
from tether._loop.pause import apply_resume, is_paused, remember_for_parents
from tether._loop.results import STRUCTURED_TOOL, UNKNOWN_OUTCOME
from tether._loop.run import Run
from tether.errors import NothingToResumeError, ResumeError
from tether.event import AgentEvent, EventType, ReplyStartEvent, ResumeEvent, UserInterruptEvent
from tether.message import (
    ChatUsage,
    ContentBlock,
    Msg,
    ToolCallBlock,
    ToolCallState,
)
from tether.message._inputs import validate_inputs
from tether.state import AgentState, ReplyCursor
from tether.state._load import check_loaded

if TYPE_CHECKING:
    from tether.agent import Agent

__all__ = [
    "begin_reply",
    "close_reply",
    "close_unfinished",
    "commit_step",
    "observe_messages",
    "start_reply",
]


async def begin_reply(
    run: Run,
    inputs: Any,
    name: str,
    on_rejection: Literal["continue", "end_reply"],
) -> list[AgentEvent]:
    """Start a reply (messages), resume the paused one (an event), or continue (None).

    Bad input raises before anything changes; the events to announce come back once the
    state is written.
    """
    state = run.state
    if inputs is None or isinstance(inputs, ResumeEvent):  # both need the reply's message
        cursor = state.reply
        check_loaded(cursor.reply_id if cursor else None, state.reply_msg() is not None)
    if isinstance(inputs, ResumeEvent):
        own, routed = await route(state, inputs, await run.tools())
        for call, record, child_event in routed:  # the child resumes when its call runs again
            record["resume"] = child_event.model_dump(mode="json")
            put(call, "state", ToolCallState.ALLOWED)
            remember_for_parents(state, child_event)
        if own is None:
            return []
        if isinstance(own, UserInterruptEvent):
            await release_records(state, await run.tools())
        model = run.structured_model
        return await apply_resume(
            state, own, run.fit, on_rejection=on_rejection, structured_model=model
        )
    if inputs is not None:
        msgs = validate_inputs(inputs)
        reply_id = await start_reply(state, msgs, name, run.structured_model, run.commit)
        if not run.announces(EventType.REPLY_START):
            return []
        return [ReplyStartEvent(reply_id=reply_id, name=name)]
    if state.reply is None:
        raise NothingToResumeError(
            "reply(None) continues a reply in progress, but there is none; "
            "pass a message to start one"
        )
    return []


async def start_reply(
    state: AgentState,
    msgs: list[Msg],
    name: str,
    structured_model: type[BaseModel] | None,
    commit: Commit,
) -> str:
    """Add the input messages and the reply's empty message, set the cursor; return its id.

    A reply left unfinished (e.g. by a failed model call) is closed first; a paused one
    raises `ResumeError`.
    """
    if state.reply is not None:
        await close_unfinished(state, commit, doing="sending a new message")
    for msg in msgs:
        state.add_message(msg)
    reply_id = new_id()
    # `Msg` with the role: the same `AssistantMsg`, without the role class's argument check
    state.add_message(Msg(name=name, role="assistant", content=[], id=reply_id))
    if structured_model is None:
        cursor = ReplyCursor(reply_id=reply_id, structured_json_schema=None)
    else:
        schema = structured_model.model_json_schema()
        cursor = ReplyCursor(reply_id=reply_id, structured_json_schema=schema)
    put(state, "reply", cursor)
    return reply_id


async def close_unfinished(state: AgentState, commit: Commit, *, doing: str) -> None:
    """Close a reply left unfinished (a failed model call) before new messages come in.

    Messages never land in the middle of a reply: its later steps would come before them
    in the context though they were written after. A paused reply raises `ResumeError`
    and nothing changes.
    """
    if state.reply is None:
        return
    if is_paused(state):
        raise ResumeError(
            f"reply {state.reply.reply_id!r} is paused waiting for tool calls; resume it "
            "with UserConfirmResultEvent / ExternalExecutionResultEvent, or abort it "
            f"with UserInterruptEvent, before {doing}"
        )
    await close_reply(state, commit)


def commit_step(
    state: AgentState,
    blocks: Sequence[ContentBlock],
    usage: ChatUsage | None,
    *,
    forced_final: bool,
) -> None:
    """Write a reasoning step's answer into the reply at once (nothing half-written on failure).

    A step without tool calls finishes the reply, unless a structured answer is still
    missing: then one more step is asked for (`structured_reminder`), once. A forced
    final step keeps no tool calls but the structured answer's.
    """
    cursor, msg = state.reply, reply_message(state)
    assert cursor is not None and msg is not None, "no reply in progress"
    if forced_final:  # only a structured answer may still be given as a call
        structured = cursor.structured_json_schema is not None
        blocks = [
            b
            for b in blocks
            if not isinstance(b, ToolCallBlock) or (structured and b.name == STRUCTURED_TOOL)
        ]
    msg.content.extend(blocks)
    if usage is None or not usage.input_tokens:
        state.note_blocks(blocks)  # else the usage re-anchors the count on the provider's
    if usage is not None:
        state.record_usage(usage)
        put(msg, "usage", usage if msg.usage is None else msg.usage + usage)
    put(cursor, "iteration", cursor.iteration + 1)
    for block in blocks:
        if isinstance(block, ToolCallBlock):
            return
    if cursor.structured_json_schema is not None and "structured_output" not in msg.metadata:
        if not forced_final and not cursor.structured_reminder:
            cursor.structured_reminder = True  # one more step, forced to call the tool
            return
    put(cursor, "finished", True)


async def close_reply(state: AgentState, commit: Commit) -> None:
    """End the reply in progress: its calls without a result are interrupted; clear the cursor."""
    msg = reply_message(state)
    calls = msg.tool_calls if msg is not None else []
    if any(c.state is not ToolCallState.FINISHED for c in calls):
        running = [c for c in calls if c.state is ToolCallState.RUNNING]  # their process died
        await interrupt_unfinished(running, commit, UNKNOWN_OUTCOME)
        await interrupt_unfinished(calls, commit, "The reply ended before this call ran.")
    put(state, "reply", None)


async def observe_messages(agent: Agent, msgs: Msg | list[Msg]) -> None:
    """Add messages to the context without reasoning (closing a reply left unfinished)."""
    checked, run = validate_inputs(msgs), Run(agent=agent, state=agent.state)
    await close_unfinished(run.state, run.commit, doing="observing messages")
    for msg in checked:
        run.state.add_message(msg)
