"""`POST /v1/sessions/{id}/mcp-requests/{request_id}`: answer an MCP server's question.

A running reply's `mcp_elicitation_request` or `mcp_sampling_request` event (on the SSE
stream) names a `request_id`; the tool call waits until this route answers it. The
waiting call lives in the worker that runs the reply: with several workers, route a
session's requests to one worker (sticky sessions).
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from tether.app.server._context import service_of
from tether.errors import ResumeError

__all__ = ["router"]

router = APIRouter(prefix="/v1/sessions/{session_id}")


class MCPAnswer(BaseModel):
    """The user's answer: `action` (+ `content`) for an elicitation, `approved` for sampling."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["accept", "decline", "cancel"] | None = None
    """Elicitation: accept (with `content`), decline, or cancel."""
    content: dict[str, Any] | None = Field(default=None, max_length=100)
    """Elicitation (accept, form mode): the form's fields."""
    approved: bool | None = None
    """Sampling: let the model answer the server (`true`) or refuse (`false`)."""


class MCPAnswered(BaseModel):
    """The answer reached the waiting call."""

    status: Literal["answered"] = "answered"
    request_id: str


@router.post("/mcp-requests/{request_id}", response_model=MCPAnswered, status_code=202)
async def answer_mcp_request(
    session_id: str, request_id: str, body: MCPAnswer, request: Request
) -> MCPAnswered:
    """Answer the MCP server's question a running reply of this session waits on.

    409 if no question of this session's running reply waits under `request_id`
    (answered already, timed out, or the reply ended).
    """
    from tether.mcp import ElicitationResponse, answer_elicitation, answer_sampling
    from tether.mcp._asking import pending_request

    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    pending = pending_request(request_id)
    active = await service.runs.events.active(ref.key)
    if pending is None or active is None or active.reply_id != pending.reply_id:
        raise ResumeError(
            f"no MCP request {request_id!r} waits in session {session_id!r}: it was answered, "
            "timed out, or its reply ended (answer only while the reply runs)"
        )
    if pending.kind == "sampling":
        if body.approved is None:
            raise ResumeError(f"MCP request {request_id!r} is a sampling request: send `approved`")
        settled = answer_sampling(request_id, body.approved)
    else:
        if body.action is None:
            raise ResumeError(f"MCP request {request_id!r} is an elicitation: send `action`")
        content = body.content if body.action == "accept" else None
        settled = answer_elicitation(request_id, ElicitationResponse(body.action, content))
    if not settled:
        raise ResumeError(f"MCP request {request_id!r} was answered already")
    return MCPAnswered(request_id=request_id)
