"""`POST /v1/sessions/{id}/mcp-requests/{request_id}`: answer an MCP server's question.

A running reply's `mcp_elicitation_request` or `mcp_sampling_request` event (on the SSE
stream) names a `request_id`; the tool call waits until this route answers it. Any
worker may take the answer: the question is announced in the service's notes and the
answer stored there for the worker whose call waits (`NotesRelay`); the first answer wins.
"""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, ConfigDict, Field

from tether.app.server._context import service_of
from tether.app.server._relay import Question
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
    from tether.mcp._asking import encode_answer, pending_request

    service = service_of(request)
    ref = await service.find(service.user(request), session_id)
    notes = service.runs.notes
    local = pending_request(request_id)
    question = await Question.find(notes, ref.key, request_id)
    if question is None and local is not None:
        question = Question(local.kind, local.reply_id)
    active = await service.runs.events.active(ref.key)
    if question is None or active is None or active.reply_id != question.reply_id:
        raise ResumeError(
            f"no MCP request {request_id!r} waits in session {session_id!r}: it was answered, "
            "timed out, or its reply ended (answer only while the reply runs)"
        )
    answer: ElicitationResponse | bool
    if question.kind == "sampling":
        if body.approved is None:
            raise ResumeError(f"MCP request {request_id!r} is a sampling request: send `approved`")
        answer = body.approved
    else:
        if body.action is None:
            raise ResumeError(f"MCP request {request_id!r} is an elicitation: send `action`")
        answer = ElicitationResponse(body.action, body.content if body.action == "accept" else None)
    if not await Question.answer(notes, ref.key, request_id, encode_answer(answer)):
        raise ResumeError(f"MCP request {request_id!r} was answered already")
    if isinstance(answer, bool):  # a call waiting here is settled now; one elsewhere polls
        answer_sampling(request_id, answer)
    else:
        answer_elicitation(request_id, answer)
    return MCPAnswered(request_id=request_id)
