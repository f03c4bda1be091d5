"""What every route needs: the caller's user id, the runs, and finding a caller's session."""

from __future__ import annotations

from dataclasses import dataclass

from fastapi import Request

from tether.agent import pending_calls
from tether.app.server._auth import KeyRing
from tether.app.server._bodies import SessionStatus, SessionView
from tether.app.server._runs import Runs, SessionRef
from tether.app.storage import ActiveRun, LogKey, SessionRecord
from tether.errors import SessionNotFoundError
from tether.permission import PermissionMode

__all__ = ["Service", "not_found", "service_of", "session_view"]


@dataclass(slots=True)
class Service:
    """The service's parts, kept on `app.state.tether`."""

    runs: Runs
    keys: KeyRing
    max_mode: PermissionMode = PermissionMode.BYPASS
    """The highest permission mode a client may give a session."""

    def user(self, request: Request) -> str:
        """The caller's user id (`AuthenticationError` without a valid key)."""
        return self.keys.user_of(request)

    async def find(self, user_id: str, session_id: str) -> SessionRef:
        """The caller's session by id; `SessionNotFoundError` for anyone else's."""
        events = self.runs.events
        agent_id = await events.agent_of(LogKey(user_id, session_id))
        if agent_id is None:  # created through the library, not the service: look it up
            infos = await self.runs.storage.list_sessions(user_id)
            match = [i for i in infos if i.session_id == session_id]
            if not match:
                raise not_found(session_id)
            agent_id = await events.bind(LogKey(user_id, session_id), match[0].agent_id)
        return SessionRef(user_id, agent_id, session_id)

    async def load(self, ref: SessionRef) -> SessionRecord:
        """The stored session, or `SessionNotFoundError`."""
        record = await self.runs.storage.get_session(*ref.ids)
        if record is None:
            raise not_found(ref.session_id)
        return record


def service_of(request: Request) -> Service:
    """The service the request reached."""
    service: Service = request.app.state.tether
    return service


def not_found(session_id: str) -> SessionNotFoundError:
    """The error for a session id the caller does not have."""
    return SessionNotFoundError(
        f"you have no session {session_id!r}; list yours with `GET /v1/sessions` or create "
        "one with `POST /v1/sessions`"
    )


def session_view(
    record: SessionRecord, active: ActiveRun | None, last_event_id: int
) -> SessionView:
    """A session as the API shows it: status, pending calls and version."""
    state = record.state
    cursor = state.reply
    asking, submitted = pending_calls(state)  # a sub-agent's calls, ids qualified
    status: SessionStatus = "idle"
    if active is not None:
        status = "running"
    elif asking:
        status = "awaiting_confirmation"
    elif submitted:
        status = "awaiting_external"
    reply_id = active.reply_id if active is not None and active.reply_id else None
    if reply_id is None and cursor is not None:
        reply_id = cursor.reply_id
    return SessionView(
        session_id=record.session_id,
        agent_id=record.agent_id,
        status=status,
        reply_id=reply_id,
        pending=[*asking, *submitted] if active is None else [],
        version=record.version,
        last_event_id=last_event_id,
        message_count=len(state.context),
        created_at=record.created_at,
        updated_at=record.updated_at,
        metadata=record.metadata,
        permission_mode=state.permission_context.mode.value,
        usage=state.usage,
    )
