"""`PUT /v1/sessions/{id}/title`: name a session (the web UI names it after its first message)."""

from __future__ import annotations

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from tether.app.server._bodies import SessionView
from tether.app.server._context import service_of, session_view
from tether.errors import InvalidInputError

__all__ = ["SessionTitle", "router"]

router = APIRouter(prefix="/v1")


class SessionTitle(BaseModel):
    """`PUT /v1/sessions/{id}/title`: the session's new title."""

    model_config = ConfigDict(extra="forbid", use_attribute_docstrings=True)

    title: str = Field(min_length=1, max_length=200)
    """Shown in the session list; runs of white space become one space."""


@router.put("/sessions/{session_id}/title", response_model=SessionView)
async def set_title(session_id: str, body: SessionTitle, request: Request) -> SessionView:
    """Set `metadata.title` (other metadata kept; allowed while a reply runs: no state change)."""
    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    title = " ".join(body.title.split())
    if not title:
        raise InvalidInputError("the title is blank; give it at least one visible character")
    record = await service.load(ref)
    await service.runs.storage.upsert_session(
        *ref.ids, metadata={**record.metadata, "title": title}
    )
    events = service.runs.events
    active = await events.active(ref.key)
    return session_view(await service.load(ref), active, await events.last_seq(ref.key))
