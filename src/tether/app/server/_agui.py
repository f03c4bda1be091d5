"""`POST /v1/ag-ui/{agent_id}`: the AG-UI protocol over the service's own runs.

An adapter, not a second engine: the thread is a session of the caller's, the run is a
reply started with `Runs.start` (same leases, event log and auth as `/replies`), and the
answer is the reply's logged events translated to AG-UI's (`_agui_events`). A pause for
confirmation ends the run with an interrupt outcome; the client's next run answers it
with `resume`. Frontend tools (`tools`) are external tools: the run ends with their calls
pending, and the next run carries their results as `tool` messages.

Failures before anything runs are HTTP problems (401, 404, 409); a run input the session
cannot take (a bad `resume` entry, a rule broader than suggested, a result for no pending
call) is a `RUN_ERROR` run that changed nothing.
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Any

from ag_ui.core import (
    BaseEvent,
    ResumeEntry,
    RunAgentInput,
    RunStartedEvent,
    TextPart,
    ToolMessage,
    UserMessage,
)
from ag_ui.encoder import EventEncoder
from fastapi import APIRouter, Request
from fastapi.responses import StreamingResponse
from pydantic import ValidationError

from tether.agent import pending_calls
from tether.app.server._agui_events import AguiTranslator
from tether.app.server._agui_tools import ClientTools
from tether.app.server._context import Service, service_of
from tether.app.server._runs import RunInput, SessionRef
from tether.app.server._stream import follow
from tether.app.storage import LogKey
from tether.errors import (
    InvalidInputError,
    ResumeError,
    SessionConflictError,
    SessionInputError,
    SessionNotFoundError,
)
from tether.event import (
    ConfirmResult,
    ExternalExecutionResultEvent,
    UserConfirmResultEvent,
    event_adapter,
)
from tether.message import (
    Msg,
    ToolCallBlock,
    ToolResultBlock,
    ToolResultState,
    UserMsg,
)
from tether.permission import PermissionRule
from tether.state import AgentState

__all__ = ["router"]

router = APIRouter(prefix="/v1/ag-ui")
_THREAD_ID = re.compile(r"^[A-Za-z0-9._~:@-]{1,200}$")
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_REFUSED = (ResumeError, InvalidInputError, SessionInputError)


@router.post(
    "/{agent_id}",
    responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}},
)
async def run_agent(agent_id: str, body: RunAgentInput, request: Request) -> StreamingResponse:
    """Run the agent on an AG-UI thread; the answer is AG-UI's event stream (SSE).

    The thread is one of the caller's sessions (created by its first run); `resume`
    answers the interrupts of a paused run (`interruptId` is the tool call's id; a
    sub-agent's is qualified, `parent_call/child_call`); its payload is `approved`,
    `rules`, `rulesScope` (`agent_and_parents`: a sub-agent's rules for its parents too),
    `input` and `reason`.
    """
    service = service_of(request)
    user = service.user(request)
    agent = service.runs.agent(agent_id)  # 404 before anything else
    if not _THREAD_ID.match(body.thread_id):
        raise InvalidInputError(
            f"threadId {body.thread_id[:40]!r} is not a valid id: use 1-200 letters, digits "
            "or `._~:@-`"
        )
    resuming = bool(body.resume) or any(isinstance(m, ToolMessage) for m in body.messages)
    ref, state = await _thread(service, user, agent_id, body.thread_id, existing=resuming)
    translator = AguiTranslator(body.thread_id, body.run_id)
    encoder = EventEncoder(accept=request.headers.get("accept", "text/event-stream"))
    started = RunStartedEvent(thread_id=body.thread_id, run_id=body.run_id)
    try:
        inputs = _inputs(body, state)
        tools = ClientTools(list(body.tools or ()), set(agent.toolkit.tools))
        if ref is None:
            ref = await _create(service, user, agent_id, body.thread_id)
        lease = await service.runs.start(ref, inputs, tools=tools)
    except _REFUSED as exc:
        refused = [started, translator.error(type(exc).__name__, str(exc))]
        return _response(_frames_of(refused, encoder))
    batches = follow(service.runs.events, ref.key, lease.start_seq, token=lease.token)

    async def frames() -> AsyncIterator[str]:
        yield encoder.encode(started)
        async for batch in batches:
            for entry in batch:
                for out in translator.translate(event_adapter.validate_json(entry.data)):
                    yield encoder.encode(out)
        if not translator.finished:
            lost = translator.error("RunLost", "the run ended without an outcome; run again")
            yield encoder.encode(lost)

    return _response(frames())


def _response(frames: AsyncIterator[str]) -> StreamingResponse:
    return StreamingResponse(frames, media_type="text/event-stream", headers=_SSE_HEADERS)


async def _frames_of(events: list[BaseEvent], encoder: EventEncoder) -> AsyncIterator[str]:
    for event in events:
        yield encoder.encode(event)


async def _thread(
    service: Service, user: str, agent_id: str, thread_id: str, *, existing: bool
) -> tuple[SessionRef | None, AgentState]:
    """The caller's session for the thread and its state; `None` for a new thread.

    Raises:
        SessionNotFoundError: `existing` (the input answers a pause) but there is none.
        SessionConflictError: the thread is a session of another agent.
    """
    try:
        ref = await service.find(user, thread_id)
    except SessionNotFoundError:
        if existing:
            raise
        return None, AgentState()
    if ref.agent_id != agent_id:
        raise SessionConflictError(
            f"thread {thread_id!r} belongs to agent {ref.agent_id!r}; use a new threadId for "
            f"agent {agent_id!r}"
        )
    return ref, (await service.load(ref)).state


async def _create(service: Service, user: str, agent_id: str, thread_id: str) -> SessionRef:
    runs = service.runs
    await runs.storage.upsert_session(user, agent_id, thread_id, metadata={"ag_ui": True})
    await runs.events.bind(LogKey(user, thread_id), agent_id)
    return SessionRef(user, agent_id, thread_id)


def _inputs(body: RunAgentInput, state: AgentState) -> RunInput:
    """What the run input asks of the session: answers to its pause, or a new message."""
    asking, submitted = pending_calls(state) if state.reply is not None else ([], [])
    if body.resume:
        if not asking or state.reply is None:
            raise ResumeError("the thread has no run waiting for approval; drop `resume`")
        return UserConfirmResultEvent(
            reply_id=state.reply.reply_id,
            confirm_results=[_answer(entry, asking) for entry in body.resume],
        )
    if submitted and state.reply is not None:
        return ExternalExecutionResultEvent(
            reply_id=state.reply.reply_id, execution_results=_results(body, submitted)
        )
    if asking:
        raise ResumeError(
            "the thread's last run waits for approval: answer its interrupts with `resume`"
        )
    last = body.messages[-1] if body.messages else None
    if not isinstance(last, UserMessage):
        raise InvalidInputError("the run input must end with a user message (or carry `resume`)")
    message: Msg = UserMsg("user", _text(last.content))
    return message


def _answer(entry: ResumeEntry, asking: list[ToolCallBlock]) -> ConfirmResult:
    call = next((c for c in asking if c.id == entry.interrupt_id), None)
    if call is None:
        ids = ", ".join(c.id for c in asking)
        raise ResumeError(f"no interrupt {entry.interrupt_id!r} is open (open: {ids})")
    payload: Any = entry.payload if isinstance(entry.payload, dict) else {}
    approved = entry.status == "resolved" and payload.get("approved") is True
    edited = payload.get("input")
    reason = payload.get("reason")
    try:
        rules = [PermissionRule.model_validate(r) for r in payload.get("rules") or ()]
        tool_call = call if edited is None else call.model_copy(update={"input": edited})
        return ConfirmResult(
            confirmed=approved,
            tool_call=tool_call,
            rules=rules if approved else [],
            reason=reason if isinstance(reason, str) else None,
            rules_scope=payload.get("rulesScope") or "agent",
        )
    except ValidationError as exc:
        raise InvalidInputError(
            f"resume entry {entry.interrupt_id!r}: {exc.errors()[0]['msg']}"
        ) from None


def _results(body: RunAgentInput, submitted: list[ToolCallBlock]) -> list[ToolResultBlock]:
    answers = {m.tool_call_id: m for m in body.messages if isinstance(m, ToolMessage)}
    missing = [c.id for c in submitted if c.id not in answers]
    if missing:
        raise ResumeError(
            f"the thread waits for the results of frontend tool calls {', '.join(missing)}: "
            "send them as `tool` messages"
        )
    return [
        ToolResultBlock(
            id=call.id,
            name=call.name,
            output=_text(answers[call.id].content),
            state=ToolResultState.ERROR if answers[call.id].error else ToolResultState.SUCCESS,
        )
        for call in submitted
    ]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.text for part in content if isinstance(part, TextPart))
