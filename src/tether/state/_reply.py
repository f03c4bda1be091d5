"""Writing a reply's progress into the state: its start, each step's answer, its end."""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel

from tether._ids import new_id
from tether.errors import ResumeError
from tether.message import AssistantMsg, ChatUsage, ContentBlock, Msg, ToolCallBlock
from tether.state._pause import is_paused
from tether.state._state import AgentState, ReplyCursor
from tether.tool._batch_run import Commit, interrupt_unfinished

__all__ = ["close_reply", "commit_step", "start_reply"]


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
        if is_paused(state):
            raise ResumeError(
                f"reply {state.reply.reply_id!r} is paused waiting for tool calls; resume it "
                "with UserConfirmResultEvent / ExternalExecutionResultEvent, or abort it "
                "with UserInterruptEvent, before sending a new message"
            )
        await close_reply(state, commit)
    for msg in msgs:
        state.add_message(msg)
    reply_id = new_id()
    state.add_message(AssistantMsg(name=name, content=[], id=reply_id))
    state.reply = ReplyCursor(
        reply_id=reply_id,
        structured_schema=(
            structured_model.model_json_schema() if structured_model is not None else None
        ),
    )
    return reply_id


def commit_step(
    state: AgentState,
    blocks: Sequence[ContentBlock],
    usage: ChatUsage | None,
    *,
    forced_final: bool,
) -> None:
    """Write a reasoning step's answer into the reply at once (nothing half-written on failure).

    A step without tool calls finishes the reply, unless a structured answer is still
    missing: then one more step is asked for (`structured_reminder`), once.
    """
    cursor, msg = state.reply, state.reply_msg()
    assert cursor is not None and msg is not None, "no reply in progress"
    if forced_final:
        blocks = [b for b in blocks if not isinstance(b, ToolCallBlock)]
    msg.content.extend(blocks)
    if usage is None or not usage.input_tokens:
        state.note_blocks(blocks)  # else the usage re-anchors the count on the provider's
    if usage is not None:
        state.record_usage(usage)
        msg.usage = usage if msg.usage is None else msg.usage + usage
    cursor.iteration += 1
    if any(isinstance(b, ToolCallBlock) for b in blocks):
        return
    if cursor.structured_schema is not None and "structured_output" not in msg.metadata:
        if not forced_final and not cursor.structured_reminder:
            cursor.structured_reminder = True  # one more step, forced to call the tool
            return
    cursor.finished = True


async def close_reply(state: AgentState, commit: Commit) -> None:
    """End the reply in progress: its calls without a result are interrupted; clear the cursor."""
    msg = state.reply_msg()
    calls = msg.tool_calls if msg is not None else []
    await interrupt_unfinished(calls, commit, "The reply ended before this call ran.")
    state.reply = None
