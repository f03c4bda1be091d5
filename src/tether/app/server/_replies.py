"""Routes that run and follow replies: `/replies` (JSON or SSE), `/events`, `/interrupt`."""

from __future__ import annotations

from typing import Annotated, Literal

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import StreamingResponse

from tether.app.server._bodies import InterruptAccepted, ReplyRequest, ReplyResult, ReplyStatus
from tether.app.server._context import Service, service_of
from tether.app.server._limits import event_id
from tether.app.server._runs import SessionRef
from tether.app.server._stream import follow, sse_frames
from tether.app.storage import LogEntry
from tether.errors import ReplyInProgressError
from tether.event import (
    ErrorEvent,
    EventType,
    ReplyEndEvent,
    UserInterruptEvent,
    event_adapter,
)
from tether.message import ToolCallState

__all__ = ["router"]

router = APIRouter(prefix="/v1/sessions/{session_id}")
_SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
_REPLY_RESPONSES: dict[int | str, dict[str, object]] = {
    200: {
        "description": "The reply's outcome (JSON), or its events (`text/event-stream`).",
        "content": {"text/event-stream": {"schema": {"type": "string"}}},
    }
}


def _wants_sse(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "")


def _stream(service: Service, ref: SessionRef, after: int, token: int | None) -> StreamingResponse:
    frames = sse_frames(follow(service.runs.events, ref.key, after, token=token))
    return StreamingResponse(frames, media_type="text/event-stream", headers=_SSE_HEADERS)


@router.post("/replies", response_model=ReplyResult, responses=_REPLY_RESPONSES)
async def post_reply(
    session_id: str,
    body: ReplyRequest,
    request: Request,
    if_busy: Annotated[Literal["fail", "interrupt"], Query()] = "fail",
) -> ReplyResult | StreamingResponse:
    """Start a reply (a message), resume a pause (an event), or continue (`null`).

    409 with the running reply's id if one runs, unless `?if_busy=interrupt`.
    """
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    lease = await service.runs.start(ref, body.input, if_busy=if_busy == "interrupt")
    if _wants_sse(request):
        return _stream(service, ref, lease.start_seq, lease.token)
    entries = [
        e
        async for batch in follow(service.runs.events, ref.key, lease.start_seq, token=lease.token)
        for e in batch
    ]
    return _result(entries)


def _result(entries: list[LogEntry]) -> ReplyResult:
    """What the logged events of one run say about how it ended."""
    events = [event_adapter.validate_json(e.data) for e in entries]
    last = entries[-1].seq if entries else 0
    reply_id = events[0].reply_id if events else None
    pauses = [
        e
        for e in events
        if e.type in (EventType.REQUIRE_USER_CONFIRM, EventType.REQUIRE_EXTERNAL_EXECUTION)
    ]
    ends = [e for e in events if isinstance(e, ReplyEndEvent)]
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    status: ReplyStatus
    if errors:
        return ReplyResult(status="error", reply_id=reply_id, events=errors, last_event_id=last)
    if ends:
        msg = ends[-1].msg
        interrupted = any(getattr(b, "state", None) == "interrupted" for b in msg.content)
        status = "interrupted" if interrupted else "completed"
        return ReplyResult(status=status, reply_id=reply_id, message=msg, last_event_id=last)
    if pauses:
        confirm = any(e.type == EventType.REQUIRE_USER_CONFIRM for e in pauses)
        status = "awaiting_confirmation" if confirm else "awaiting_external"
        return ReplyResult(status=status, reply_id=reply_id, events=pauses, last_event_id=last)
    return ReplyResult(status="error", reply_id=reply_id, last_event_id=last)


@router.get(
    "/events", responses={200: {"content": {"text/event-stream": {"schema": {"type": "string"}}}}}
)
async def get_events(
    session_id: str,
    request: Request,
    after: Annotated[int | None, Query(ge=0, le=2**53)] = None,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> StreamingResponse:
    """SSE: the session's events after `Last-Event-ID` (or `?after=`), then live ones.

    The stream ends when the reply running (or the last one) ends or pauses.
    """
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    cursor = after or 0
    if last_event_id is not None:
        cursor = event_id(last_event_id)
    return _stream(service, ref, cursor, None)


@router.post("/interrupt", response_model=InterruptAccepted, status_code=202)
async def interrupt(session_id: str, request: Request) -> InterruptAccepted:
    """End the running or paused reply as interrupted (idempotent; `idle` if none)."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    runs = service.runs
    for _ in range(3):  # a reply may start or end between the looks
        reply_id = await runs.interrupt(ref.key)
        if reply_id is not None:
            return InterruptAccepted(status="interrupting", reply_id=reply_id or None)
        record = await service.load(ref)
        message = record.state.reply_msg()
        cursor = record.state.reply
        waiting = message is not None and any(
            c.state in (ToolCallState.ASKING, ToolCallState.SUBMITTED) for c in message.tool_calls
        )
        if cursor is None or not waiting:
            return InterruptAccepted(status="idle", reply_id=None)
        try:
            await runs.start(ref, UserInterruptEvent(reply_id=cursor.reply_id))
        except ReplyInProgressError:
            continue
        return InterruptAccepted(status="interrupting", reply_id=cursor.reply_id)
    return InterruptAccepted(status="interrupting", reply_id=None)
