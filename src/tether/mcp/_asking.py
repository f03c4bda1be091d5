"""A server's question answered by the caller of the reply while the tool call waits.

`ask_caller` (an elicitation handler) and `confirm_with_caller` (a sampling approval)
put an `ElicitationRequestEvent` or a `SamplingRequestEvent` into the running reply's
event stream and wait until the caller answers with `answer_elicitation` or
`answer_sampling` (in-process, or through the service's POST route). Nobody watching the
stream: elicitation is declined and sampling refused. They assume the caller reads the
events (`reply_stream`, `tether serve`, `tether chat`); under `reply()` a question reaches
nobody and ends at `elicitation_timeout` (or the call's `execution_timeout`) as cancel, so
a headless run keeps the default handlers, which decline.

The waiting answers live in this process (a dict keyed by request id). An answer given
in another process arrives through the `AnswerRelay` registered for the reply (the
service registers one over its shared storage, so any worker may take the answer).
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from tether.event import AgentEvent, CustomEvent
from tether.mcp._relay import relay_for
from tether.mcp._requests import ElicitationRequest, ElicitationResponse, SamplingRequest
from tether.permission import PermissionBehavior

if TYPE_CHECKING:
    from tether.tool import ToolContext

__all__ = [
    "Caller",
    "ElicitationRequestEvent",
    "PendingRequest",
    "SamplingRequestEvent",
    "answer_elicitation",
    "answer_sampling",
    "ask_caller",
    "cancel_requests_of",
    "confirm_with_caller",
    "decode_answer",
    "encode_answer",
    "pending_request",
]

ELICITATION_EVENT = "mcp_elicitation_request"
SAMPLING_EVENT = "mcp_sampling_request"


class ElicitationRequestEvent(CustomEvent):
    """A server asks the user (a `CustomEvent` named `mcp_elicitation_request`).

    `data`: `request_id` (answer with `answer_elicitation`), `server`, `message`, `mode`
    (`form` | `url`), `requested_schema` (form), `url` (URL mode), `tool_call_id`.
    """

    name: str = ELICITATION_EVENT

    @property
    def request_id(self) -> str:
        """The id to answer with."""
        return str(self.data["request_id"])

    @property
    def requested_schema(self) -> dict[str, Any] | None:
        """The form's JSON schema (form mode)."""
        schema = self.data.get("requested_schema")
        return schema if isinstance(schema, dict) else None

    @classmethod
    def of(cls, event: AgentEvent) -> ElicitationRequestEvent | None:
        """`event` as an elicitation request (also one that came over the wire), or None."""
        if isinstance(event, cls):
            return event
        if isinstance(event, CustomEvent) and event.name == ELICITATION_EVENT:
            return cls.model_validate(event.model_dump())
        return None


class SamplingRequestEvent(CustomEvent):
    """A server asks the model; the user confirms (a `CustomEvent`, `mcp_sampling_request`).

    `data`: `request_id` (answer with `answer_sampling`), `server`, `text` (the
    conversation), `system_prompt`, `max_tokens`, `tool_call_id`.
    """

    name: str = SAMPLING_EVENT

    @property
    def request_id(self) -> str:
        """The id to answer with."""
        return str(self.data["request_id"])

    @classmethod
    def of(cls, event: AgentEvent) -> SamplingRequestEvent | None:
        """`event` as a sampling request (also one that came over the wire), or None."""
        if isinstance(event, cls):
            return event
        if isinstance(event, CustomEvent) and event.name == SAMPLING_EVENT:
            return cls.model_validate(event.model_dump())
        return None


@dataclass(frozen=True, slots=True)
class Caller:
    """The running tool call a server request came during (set by tether on requests)."""

    context: ToolContext | None
    """The call's context (its `emit` reaches the reply's caller), if a call runs."""
    behavior: PermissionBehavior = PermissionBehavior.ASK
    """What the `McpElicit` / `McpSample` rules say for this server."""


@dataclass(frozen=True, slots=True)
class PendingRequest:
    """A question waiting for the caller's answer."""

    request_id: str
    kind: Literal["elicitation", "sampling"]
    server: str
    reply_id: str
    tool_call_id: str
    future: asyncio.Future[Any]


_PENDING: dict[str, PendingRequest] = {}


def pending_request(request_id: str) -> PendingRequest | None:
    """The question waiting under `request_id` in this process, if any."""
    return _PENDING.get(request_id)


def _settle(request_id: str, kind: str, value: Any) -> bool:
    pending = _PENDING.get(request_id)
    if pending is None or pending.kind != kind or pending.future.done():
        return False
    loop = pending.future.get_loop()
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    if running is loop:
        pending.future.set_result(value)
    else:
        loop.call_soon_threadsafe(_set_if_waiting, pending.future, value)
    return True


def _set_if_waiting(future: asyncio.Future[Any], value: Any) -> None:
    if not future.done():
        future.set_result(value)


def answer_elicitation(request_id: str, response: ElicitationResponse) -> bool:
    """Answer a waiting `ElicitationRequestEvent`; False if none waits under that id."""
    return _settle(request_id, "elicitation", response)


def answer_sampling(request_id: str, approved: bool) -> bool:
    """Confirm (or refuse) a waiting `SamplingRequestEvent`; False if none waits."""
    return _settle(request_id, "sampling", bool(approved))


def cancel_requests_of(tool_call_id: str) -> None:
    """Settle the questions of a call that ended (cancel / refuse): nobody answers now."""
    for pending in list(_PENDING.values()):
        if pending.tool_call_id == tool_call_id and not pending.future.done():
            value: Any = ElicitationResponse(action="cancel")
            pending.future.set_result(False if pending.kind == "sampling" else value)


async def _ask(
    context: ToolContext, kind: Literal["elicitation", "sampling"], server: str, data: Any
) -> Any:
    assert context.emit is not None
    request_id = uuid.uuid4().hex
    future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
    _PENDING[request_id] = PendingRequest(
        request_id, kind, server, context.reply_id, context.tool_call_id, future
    )
    payload = {"request_id": request_id, "server": server, **data}
    payload["tool_call_id"] = context.tool_call_id
    event: CustomEvent
    if kind == "elicitation":
        event = ElicitationRequestEvent(reply_id=context.reply_id, data=payload)
    else:
        event = SamplingRequestEvent(reply_id=context.reply_id, data=payload)
    relay = relay_for(context.reply_id)
    if relay is None:
        try:
            await context.emit(event)
            return await future
        finally:
            _PENDING.pop(request_id, None)
    await relay.announce(request_id, kind, context.reply_id)
    watch = asyncio.ensure_future(relay.wait(request_id, future))
    watch.add_done_callback(lambda done: _relayed(future, kind, done))
    try:
        await context.emit(event)
        return await future
    finally:
        _PENDING.pop(request_id, None)
        watch.cancel()
        with contextlib.suppress(Exception):  # the notes expire by themselves anyway
            await relay.forget(request_id)


def _relayed(future: asyncio.Future[Any], kind: str, watch: asyncio.Future[Any]) -> None:
    """Settle `future` with the answer the relay found (if it found one first)."""
    if watch.cancelled() or watch.exception() is not None or future.done():
        return
    found = watch.result()
    if found is not None:
        future.set_result(decode_answer(kind, found))


def encode_answer(value: ElicitationResponse | bool) -> dict[str, Any]:
    """An answer as JSON, for a relay."""
    if isinstance(value, bool):
        return {"approved": value}
    return {"action": value.action, "content": value.content}


def decode_answer(kind: str, data: dict[str, Any]) -> ElicitationResponse | bool:
    """An answer from a relay's JSON (a malformed one counts as cancel / refused)."""
    if kind == "sampling":
        return data.get("approved") is True
    action = data.get("action")
    if action not in ("accept", "decline", "cancel"):
        return ElicitationResponse(action="cancel")
    content = data.get("content")
    return ElicitationResponse(action, content if isinstance(content, dict) else None)


async def ask_caller(request: ElicitationRequest) -> ElicitationResponse:
    """An elicitation handler: ask the reply's caller through an `ElicitationRequestEvent`.

    Declines when no caller watches the reply's events (a headless run).
    """
    context = request.caller.context if request.caller is not None else None
    if context is None or context.emit is None:
        return ElicitationResponse(action="decline")
    data = {
        "message": request.message,
        "mode": request.mode,
        "requested_schema": request.requested_schema,
        "url": request.url,
    }
    answer: ElicitationResponse = await _ask(context, "elicitation", request.server, data)
    return answer


async def confirm_with_caller(request: SamplingRequest) -> bool:
    """A sampling approval: the caller confirms through a `SamplingRequestEvent`.

    Yes without asking if a `McpSample` rule allows the server; no caller: refused.
    """
    caller = request.caller
    if caller is not None and caller.behavior is PermissionBehavior.ALLOW:
        return True
    context = caller.context if caller is not None else None
    if context is None or context.emit is None:
        return False
    data = {
        "text": request.text,
        "system_prompt": request.system_prompt,
        "max_tokens": request.max_tokens,
    }
    approved: bool = await _ask(context, "sampling", request.server, data)
    return approved
