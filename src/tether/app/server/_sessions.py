"""Routes of `/v1/agents` and `/v1/sessions`: list, create, show, delete, page messages."""

from __future__ import annotations

import uuid
from typing import Annotated

from fastapi import APIRouter, Query, Request, Response

from tether.app.server._bodies import (
    AgentInfo,
    AgentList,
    MessagePage,
    SessionCreate,
    SessionList,
    SessionPatch,
    SessionView,
)
from tether.app.server._ceiling import check_mode
from tether.app.server._context import service_of, session_view
from tether.app.storage import LogKey
from tether.errors import InvalidInputError, ReplyInProgressError, SessionConflictError
from tether.permission import PermissionMode

__all__ = ["router"]

router = APIRouter(prefix="/v1")
_ID = Annotated[str, Query(min_length=1, max_length=200)]


@router.get("/agents", response_model=AgentList)
async def list_agents(request: Request) -> AgentList:
    """The agents this service serves: id, name, description and tool names."""
    service = service_of(request)
    service.user(request)
    infos = []
    for agent_id, agent in sorted(service.runs.agents.items()):
        description = getattr(agent, "description", None) or agent.system_prompt.strip()
        infos.append(
            AgentInfo(
                id=agent_id,
                name=agent.name,
                description=str(description).splitlines()[0] if description else "",
                tools=sorted(agent.toolkit.tools),
                context_length=getattr(agent.model, "context_length", None),
            )
        )
    return AgentList(agents=infos)


@router.post("/sessions", response_model=SessionView, status_code=201)
async def create_session(body: SessionCreate, request: Request) -> SessionView:
    """Create a session of an agent (409 if the id is taken)."""
    service = service_of(request)
    user = service.user(request)
    runs = service.runs
    runs.agent(body.agent_id)
    session_id = body.session_id or uuid.uuid4().hex
    key = LogKey(user, session_id)
    bound = await runs.events.agent_of(key)
    existing = await runs.storage.get_session(user, body.agent_id, session_id)
    if existing is not None or (bound is not None and bound != body.agent_id):
        raise SessionConflictError(
            f"you already have a session {session_id!r}; pick another id, or omit "
            "`session_id` to get a new one"
        )
    record = await runs.storage.upsert_session(
        user, body.agent_id, session_id, metadata=body.metadata
    )
    await runs.events.bind(key, body.agent_id)
    return session_view(record, None, await runs.events.last_seq(key))


@router.get("/sessions", response_model=SessionList)
async def list_sessions(
    request: Request, agent_id: Annotated[str | None, Query(min_length=1, max_length=200)] = None
) -> SessionList:
    """The caller's sessions (of one agent with `?agent_id=`), most recent first."""
    service = service_of(request)
    user = service.user(request)
    if agent_id is not None:
        service.runs.agent(agent_id)
    return SessionList(sessions=await service.runs.storage.list_sessions(user, agent_id))


@router.get("/sessions/{session_id}", response_model=SessionView)
async def get_session(session_id: str, request: Request) -> SessionView:
    """One session: status (`running`, `awaiting_*` with the pending calls, `idle`), version."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    active = await service.runs.events.active(ref.key)
    record = await service.load(ref)
    return session_view(record, active, await service.runs.events.last_seq(ref.key))


@router.patch("/sessions/{session_id}", response_model=SessionView)
async def patch_session(session_id: str, body: SessionPatch, request: Request) -> SessionView:
    """Change the session's permission mode (409 while a reply runs; nothing changes then)."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    modes = [m.value for m in PermissionMode]
    if body.permission_mode not in modes:
        raise InvalidInputError(
            f"unknown permission mode {body.permission_mode!r}; use one of: {', '.join(modes)}"
        )
    check_mode(PermissionMode(body.permission_mode), service.max_mode)
    events = service.runs.events
    try:  # holding the lease, no reply starts while the mode changes
        lease = await events.acquire(ref.key, service.runs.lease_ttl)
    except ReplyInProgressError as exc:
        raise ReplyInProgressError(
            f"session {session_id!r} is running a reply; wait for it to end (or interrupt "
            "it with `POST .../interrupt`) before changing its permission mode",
            reply_id=exc.reply_id,
        ) from None
    try:
        record = await service.load(ref)
        record.state.permission_context.mode = PermissionMode(body.permission_mode)
        await service.runs.storage.update_session_state(
            *ref.ids, record.state, expected_version=record.version, fence=lease.token
        )
    finally:
        await events.release(lease, mark_end=False)
    return session_view(await service.load(ref), None, await events.last_seq(ref.key))


@router.delete("/sessions/{session_id}", status_code=204)
async def delete_session(session_id: str, request: Request) -> Response:
    """Delete a session and its event log (409 while a reply runs: interrupt it first)."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    active = await service.runs.events.active(ref.key)
    if active is not None:
        raise ReplyInProgressError(
            f"session {session_id!r} is running reply {active.reply_id or '(starting)'}; "
            "interrupt it (`POST .../interrupt`) and wait for it to end before deleting",
            reply_id=active.reply_id,
        )
    await service.runs.storage.delete_session(*ref.ids)
    await service.runs.events.delete(ref.key)
    return Response(status_code=204)


@router.get("/sessions/{session_id}/messages", response_model=MessagePage)
async def list_messages(
    session_id: str,
    request: Request,
    before: Annotated[int | None, Query(ge=0, le=10**9)] = None,
    limit: Annotated[int, Query(ge=1, le=500)] = 50,
) -> MessagePage:
    """The conversation, oldest first, `limit` messages ending just before `before`."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    context = (await service.load(ref)).state.context
    end = len(context) if before is None else min(before, len(context))
    start = max(0, end - limit)
    return MessagePage(
        messages=context[start:end], total=len(context), next_before=start if start > 0 else None
    )
