"""What an A2A message asks of a session: a new user message, or the answer to its pause.

A task waiting for approval (`input-required` after a confirmation request) takes the
answer as its next message: the text `yes` or `no`, or a data part
`{"approved": bool, "reason"?: str}` (one answer for every call waiting). A task waiting
for external tool results takes a data part `{"toolResults": [{"toolCallId", "output",
"isError"?}]}`. Anything else the session cannot take is a typed error; nothing changes.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.helpers.proto_helpers import get_data_parts, get_text_parts
from a2a.types.a2a_pb2 import Message

from tether.agent import pending_calls
from tether.app.server._runs import RunInput
from tether.errors import InvalidInputError, ResumeError
from tether.event import ConfirmResult, ExternalExecutionResultEvent, UserConfirmResultEvent
from tether.message import (
    Msg,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.state import AgentState

__all__ = ["ANSWER_HINT", "run_input", "waiting"]

ANSWER_HINT = 'Answer "yes" or "no" (or a data part {"approved": true|false, "reason"?: str}).'
_YES = {"yes", "y", "approve", "approved", "ok", "allow"}
_NO = {"no", "n", "reject", "rejected", "deny"}


def waiting(state: AgentState) -> tuple[list[ToolCallBlock], list[ToolCallBlock]]:
    """The calls the session's paused reply waits on: (to approve, to be run outside).

    A call waiting on its sub-agent (local or a remote A2A agent) is replaced by the
    sub-agent's waiting calls, ids qualified as in the pause events (`pending_calls`).
    """
    if state.reply_msg() is None or state.reply is None:
        return [], []
    return pending_calls(state)


def run_input(message: Message, state: AgentState, *, resuming: bool) -> RunInput:
    """The run input for `message` on a session in `state`.

    `resuming`: the message names a task that waits for input (it must answer it).

    Raises:
        ResumeError: the message does not answer the pause (or answers none).
        InvalidInputError: the message carries nothing to run.
    """
    asking, submitted = waiting(state)
    if state.reply is not None and asking:
        if not resuming:
            raise ResumeError(
                "this context has a task waiting for approval: send the answer with that "
                f"task's taskId. {ANSWER_HINT}"
            )
        return _confirm(message, state.reply.reply_id, asking)
    if state.reply is not None and submitted:
        if not resuming:
            raise ResumeError(
                "this context has a task waiting for tool results: send them with that "
                "task's taskId"
            )
        return _results(message, state.reply.reply_id, submitted)
    if resuming:
        raise ResumeError("the task waits for nothing; send a new message without taskId")
    text = _text(message)
    if not text.strip():
        raise InvalidInputError("the message has no text or data parts to answer")
    new: Msg = UserMsg("user", text)
    return new


def _confirm(message: Message, reply_id: str, asking: list[ToolCallBlock]) -> RunInput:
    approved: bool | None = None
    reason: str | None = None
    for data in get_data_parts(message.parts):
        if isinstance(data, dict) and isinstance(data.get("approved"), bool):
            approved = data["approved"]
            reason = data.get("reason") if isinstance(data.get("reason"), str) else None
    if approved is None:
        word = " ".join(get_text_parts(message.parts)).strip().lower().rstrip(".!")
        approved = True if word in _YES else False if word in _NO else None
    if approved is None:
        names = ", ".join(c.name for c in asking)
        raise ResumeError(f"the task waits for approval of {names}. {ANSWER_HINT}")
    return UserConfirmResultEvent(
        reply_id=reply_id,
        confirm_results=[
            ConfirmResult(confirmed=approved, tool_call=call, reason=reason) for call in asking
        ],
    )


def _results(message: Message, reply_id: str, submitted: list[ToolCallBlock]) -> RunInput:
    given: dict[str, dict[str, Any]] = {}
    for data in get_data_parts(message.parts):
        if isinstance(data, dict):
            for item in data.get("toolResults") or ():
                if isinstance(item, dict) and isinstance(item.get("toolCallId"), str):
                    given[item["toolCallId"]] = item
    missing = [c.id for c in submitted if c.id not in given]
    if missing:
        raise ResumeError(
            f"the task waits for the results of tool calls {', '.join(missing)}: send a data "
            'part {"toolResults": [{"toolCallId": ..., "output": ..., "isError"?: bool}]}'
        )
    return ExternalExecutionResultEvent(
        reply_id=reply_id,
        execution_results=[
            ToolResultBlock(
                id=call.id,
                name=call.name,
                output=_output(given[call.id].get("output")),
                state=ToolResultState.ERROR
                if given[call.id].get("isError") is True
                else ToolResultState.SUCCESS,
            )
            for call in submitted
        ],
    )


def _output(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _text(message: Message) -> str:
    texts = list(get_text_parts(message.parts))
    texts += [json.dumps(d) for d in get_data_parts(message.parts)]
    return "\n".join(texts)
