"""The `execute_tool` spans: permission decisions, tool calls, and calls settled by a resume."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tether._log import get_logger, record, redact, redact_repeated
from tether._streams import close_stream
from tether.middleware import ActingCall, PermissionCall
from tether.tracing._base import TracingBase
from tether.tracing._metrics import Instruments
from tether.tracing._parts import (
    REPLY_KEY,
    ReplyTrace,
    attach,
    current_reply,
    detach,
    get_current,
    is_cancel,
    record_error,
    result_text,
    tool_attributes,
    with_span,
)

__all__ = ["ToolHooks", "end_tool_span", "settled_tool_span"]

_tool_log = get_logger("tool")
_permission_log = get_logger("permission")  # (`getLogger` takes the logging lock: once)
_INTERNAL = SpanKind.INTERNAL
_NO_DECISION: tuple[str, str, bool | None] = ("", "", None)


class ToolHooks(TracingBase):
    """`on_check_permission` and `on_acting`: each tool call's span and its decision."""

    async def on_check_permission(
        self, call: PermissionCall, call_next: Callable[[PermissionCall], Awaitable[Any]]
    ) -> Any:
        """Count the decision; a denied call gets its (zero-length) `execute_tool` span."""
        decision = await call_next(call)
        behavior = str(decision.behavior)
        reason = redact_repeated(decision.reason) if decision.reason else ""
        tool_call = call.tool_call
        name, call_id = tool_call.name, tool_call.id
        self._metrics.permission_decision(behavior, name)
        reply = current_reply()
        level = logging.INFO if behavior != "allow" else logging.DEBUG
        if _permission_log.isEnabledFor(level):
            record(
                _permission_log,
                level,
                f"permission {behavior}",
                reply_id=reply.reply_id if reply else call.reply_id,
                session_id=reply.session_id if reply else None,
                tool=name,
                tool_call_id=call_id,
                decision=behavior,
                reason=reason,
            )
        if reply is None:
            return decision
        if not reply.reply_id:
            reply.stamp()
        if behavior == "allow":
            reply.decisions[call_id] = (behavior, reason, None)
        elif behavior == "deny":
            reply.spanned.add(call_id)
            attributes = tool_attributes(name, call_id, behavior, reason, None)
            attributes["error.type"] = "permission_denied"
            span = self._tracer.start_span(
                f"execute_tool {name}", kind=SpanKind.INTERNAL, attributes=attributes
            )
            span.set_status(Status(StatusCode.ERROR, reason or "permission denied"))
            span.end()
            self._metrics.tool_call(name, "denied", None)
        elif behavior == "ask":
            reply.span.add_event(
                "tether.permission.ask",
                {
                    "gen_ai.tool.name": name,
                    "gen_ai.tool.call.id": call_id,
                    "tether.permission.reason": reason,
                },
            )
        else:
            reply.decisions[call_id] = (behavior, reason, None)
        return decision

    async def on_acting(
        self, call: ActingCall, call_next: Callable[[ActingCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Run one tool call inside its `execute_tool` span."""
        context = get_current()
        reply = context.get(REPLY_KEY)
        tool_call = call.tool_call
        name, call_id = tool_call.name, tool_call.id
        decision: tuple[str, str, bool | None] = _NO_DECISION
        if isinstance(reply, ReplyTrace):
            if not reply.reply_id:
                reply.stamp()
            reply.spanned.add(call_id)
            decision = reply.decisions.pop(call_id, _NO_DECISION)
            capture = reply.capture
        else:
            reply, capture = None, self.captures_content
        attributes = tool_attributes(name, call_id, *decision)
        if capture:
            attributes["gen_ai.tool.call.arguments"] = redact(tool_call.input)
        span = self._tracer.start_span(f"execute_tool {name}", context, _INTERNAL, attributes)
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
                self._metrics,
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
    metrics: Instruments,
    result: Any,
    name: str,
    seconds: float | None,
    captured: str | None = None,
) -> None:
    """End a tool span with its outcome (and the captured result, if any)."""
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
    metrics.tool_call(name, outcome, seconds)


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
