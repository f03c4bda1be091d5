"""The `execute_tool` spans: tool calls, denied calls, and calls settled by a resume.

There is no `on_check_permission` hook (with one, the loop asks the hooks about every
call, which cost more than all of tracing's own work): a call that runs was allowed
(`on_acting` says so), a denied one is seen by its DENIED result on the reply's stream
(`denied_tool_span`), one that asks by the reply's `require_user_confirm` pause.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tether._log import get_logger, record, redact
from tether._streams import close_stream
from tether.middleware import ActingCall
from tether.tracing._base import TracingBase
from tether.tracing._metrics import Instruments
from tether.tracing._parts import (
    REPLY_KEY,
    ReplyTrace,
    attach,
    detach,
    get_current,
    is_cancel,
    record_error,
    result_text,
    tool_attributes,
    with_span,
)

__all__ = [
    "ToolHooks",
    "denied_tool_span",
    "end_tool_span",
    "permission_logged",
    "settled_tool_span",
]

_tool_log = get_logger("tool")
_permission_log = get_logger("permission")  # (`getLogger` takes the logging lock: once)
_INTERNAL = SpanKind.INTERNAL
_NO_DECISION: tuple[str, str, bool | None] = ("", "", None)
_ALLOWED: tuple[str, str, bool | None] = ("allow", "", None)
"""The decision of a call that runs with no answer of the user's recorded."""


_span_names: dict[str, str] = {}
"""Each tool's `execute_tool` span name (made once per tool name)."""


def _span_name(tool: str) -> str:
    if len(_span_names) >= 1024:  # (tools named per call: keep the newest few)
        _span_names.clear()
    name = _span_names[tool] = f"execute_tool {tool}"
    return name


class ToolHooks(TracingBase):
    """`on_acting`: each tool call's span and the decision that let it run."""

    async def on_acting(
        self, call: ActingCall, call_next: Callable[[ActingCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Run one tool call inside its `execute_tool` span."""
        context = get_current()
        reply = context.get(REPLY_KEY)
        tool_call = call.tool_call
        name, call_id = tool_call.name, tool_call.id
        if isinstance(reply, ReplyTrace):
            if not reply.reply_id:
                reply.stamp()
            reply.spanned.add(call_id)
            decision = reply.decisions.pop(call_id, None) if reply.decisions else None
            capture, metered = reply.capture, reply.metered
        else:
            reply, decision, capture = None, None, self.captures_content
            metered = self._metrics.on()
        if decision is None:  # the engine (or a hook) allowed it: counted here
            decision = _ALLOWED
            if metered:
                self._metrics.permission_decision("allow", name)
            if _permission_log.isEnabledFor(logging.DEBUG):
                permission_logged(logging.DEBUG, "allow", name, call_id, reply, call.reply_id)
        attributes = tool_attributes(name, call_id, *decision)
        if capture:
            attributes["gen_ai.tool.call.arguments"] = redact(tool_call.input)
        span_name = _span_names.get(name) or _span_name(name)
        span = self._tracer.start_span(span_name, context, _INTERNAL, attributes)
        span_context = with_span(span, context)
        started = time.perf_counter()
        result: Any = None
        stream = call_next(call)
        failure: BaseException | None = None
        token = attach(span_context)
        try:
            async for event in stream:  # as in `on_reply`: current while the tool runs only
                detach(token)
                token = None
                if getattr(event, "type", None) == "tool_result_end" and (
                    event.block_id == call_id
                ):
                    result = event.tool_result
                yield event
                token = attach(span_context)
            detach(token)
        except BaseException as exc:
            if token is not None:  # the stream raised
                detach(token)
            failure = exc
            await close_stream(stream)
            raise
        finally:
            if failure is not None and not is_cancel(failure):
                record_error(span, failure)
            end_tool_span(
                span,
                self._metrics if metered else None,
                result,
                name,
                time.perf_counter() - started,
                result_text(result) if capture and result is not None else None,
            )
            if _tool_log.isEnabledFor(logging.DEBUG):
                record(
                    _tool_log,
                    logging.DEBUG,
                    "tool call ended",
                    reply_id=reply.reply_id if reply else call.reply_id,
                    tool=name,
                    tool_call_id=call_id,
                    decision=decision[0] or None,
                    outcome=str(result.state) if result is not None else "unfinished",
                )


def end_tool_span(
    span: trace.Span,
    metrics: Instruments | None,
    result: Any,
    name: str,
    seconds: float | None,
    captured: str | None = None,
) -> None:
    """End a tool span with its outcome (and the captured result, if any).

    `metrics` None: they go nowhere in this reply.
    """
    outcome = str(result.state) if result is not None else "unfinished"
    ending: dict[str, Any] = {"tether.tool.outcome": outcome}
    if captured is not None:
        ending["gen_ai.tool.call.result"] = captured
    if outcome != "success" and result is not None:
        ending["error.type"] = f"tool_{outcome}"
        span.set_attributes(ending)
        span.set_status(Status(StatusCode.ERROR, f"the call ended {outcome}"))
    else:
        span.set_attributes(ending)
    span.end()
    if metrics is not None:
        metrics.tool_call(name, outcome, seconds)


def permission_logged(
    level: int,
    behavior: str,
    tool: str,
    call_id: str,
    reply: ReplyTrace | None,
    reply_id: str = "",
    reason: str = "",
) -> None:
    """Log one permission decision (the caller checked the level is on)."""
    record(
        _permission_log,
        level,
        f"permission {behavior}",
        reply_id=reply.reply_id if reply else reply_id,
        session_id=reply.session_id if reply else None,
        tool=tool,
        tool_call_id=call_id,
        decision=behavior,
        reason=reason,
    )


def denied_tool_span(
    tracer: trace.Tracer, metrics: Instruments, reply: ReplyTrace, event: Any
) -> None:
    """A call the permission check denied: a zero-length error span (it never ran).

    The reason is the result's text, which names it (what the model reads).
    """
    result, call_id = event.tool_result, event.block_id
    reply.spanned.add(call_id)
    name = result.name
    reason = result_text(result)
    _, _, confirmed = reply.decisions.pop(call_id, _NO_DECISION)
    attributes = tool_attributes(name, call_id, "deny", reason, confirmed)
    attributes["error.type"] = "permission_denied"
    span = tracer.start_span(
        f"execute_tool {name}", context=reply.context, kind=_INTERNAL, attributes=attributes
    )
    span.set_status(Status(StatusCode.ERROR, reason or "permission denied"))
    span.end()
    metrics.permission_decision("deny", name)
    metrics.tool_call(name, "denied", None)
    if _permission_log.isEnabledFor(logging.INFO):
        permission_logged(logging.INFO, "deny", name, call_id, reply, reason=reason)


def settled_tool_span(
    tracer: trace.Tracer, metrics: Instruments, reply: ReplyTrace, event: Any
) -> None:
    """A call answered without running here (rejected, run outside, interrupted)."""
    result = event.tool_result
    reply.spanned.add(event.block_id)
    behavior, reason, confirmed = reply.decisions.pop(event.block_id, _NO_DECISION)
    attributes = tool_attributes(result.name, event.block_id, behavior, reason, confirmed)
    attributes["tether.tool.settled_by"] = "resume"
    span = tracer.start_span(
        f"execute_tool {result.name}",
        context=reply.context,  # the reply's span is not current between events
        kind=SpanKind.INTERNAL,
        attributes=attributes,
    )
    end_tool_span(span, metrics, result, result.name, None)
