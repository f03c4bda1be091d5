"""What `TracingMiddleware` keeps per reply, and how it names things for OpenTelemetry."""

from __future__ import annotations

import json
from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from tether._log import redact
from tether.event import ExternalExecutionResultEvent, UserConfirmResultEvent, UserInterruptEvent
from tether.message import TextBlock, ThinkingBlock, ToolCallBlock, ToolResultBlock

__all__ = [
    "END",
    "REPLY_KEY",
    "attach",
    "detach",
    "get_current",
    "with_span",
    "with_reply",
    "TRACE_METADATA",
    "ReplyTrace",
    "Resume",
    "error_type",
    "is_cancel",
    "msg_parts",
    "previous_span",
    "record_error",
    "resume_of",
    "provider_name",
    "result_text",
    "server_attributes",
    "tool_attributes",
]

REPLY_KEY = otel_context.create_key("tether.reply")
"""Where the current reply's `ReplyTrace` travels in the OpenTelemetry context."""
TRACE_METADATA = "trace"
"""The reply `Msg` metadata key holding the trace and span ids of its latest span."""

END: Any = object()
"""What `anext(stream, END)` returns once the stream is over."""


def _fast_context() -> tuple[
    Any, Any, Any, Callable[[trace.Span, Any], Any], Callable[[trace.Span, Any], Any]
]:
    """`attach`, `detach`, `get_current`, and the contexts tracing makes current.

    The last two: "this context with this span current", "the current context with this
    reply's span and record".

    With the API's default runtime context (a `ContextVar`) these are the variable's own
    `set`, `reset` and `get`, and a dictionary made at once: the API's functions go
    through two or three Python calls each, and tracing makes them around every item
    of every stream it wraps. Any other runtime context, or an API whose internals
    differ, gets the API's functions.
    """
    try:
        from opentelemetry.context import _RUNTIME_CONTEXT
        from opentelemetry.context.contextvars_context import ContextVarsRuntimeContext
        from opentelemetry.trace.propagation import _SPAN_KEY

        if type(_RUNTIME_CONTEXT) is ContextVarsRuntimeContext:
            var = _RUNTIME_CONTEXT._current_context
            make = otel_context.Context

            def with_span(span: trace.Span, context: Any) -> Any:
                return make({**context, _SPAN_KEY: span})

            def with_reply(span: trace.Span, reply: Any) -> Any:
                return make({**var.get(), _SPAN_KEY: span, REPLY_KEY: reply})

            if isinstance(var, ContextVar) and isinstance(_SPAN_KEY, str):
                return var.set, var.reset, var.get, with_span, with_reply
    except (ImportError, AttributeError):  # pragma: no cover - another API version
        pass

    def api_with_reply(span: trace.Span, reply: Any) -> Any:  # pragma: no cover
        return otel_context.set_value(REPLY_KEY, reply, trace.set_span_in_context(span))

    return (  # pragma: no cover - a runtime context of its own
        otel_context.attach,
        otel_context.detach,
        otel_context.get_current,
        trace.set_span_in_context,
        api_with_reply,
    )


attach, detach, get_current, with_span, with_reply = _fast_context()
"""The API's context functions, or their fast equivalents (see `_fast_context`)."""

_RESUMES = (UserConfirmResultEvent, ExternalExecutionResultEvent, UserInterruptEvent)
"""The input events that resume a paused reply."""

_PROVIDERS = {
    "OpenAI": "openai",
    "Anthropic": "anthropic",
    "Gemini": "gcp.gemini",
    "DashScope": "dashscope",
    "Ollama": "ollama",
}


def provider_name(model: Any, override: str | None) -> str:
    """`gen_ai.provider.name` for a tether model: the conventions' value where one exists."""
    if override:
        return override
    base_url = getattr(model, "base_url", None) or ""
    if isinstance(base_url, str) and "deepseek" in base_url:
        return "deepseek"
    cls = type(model)
    name = _provider_names.get(cls)
    if name is None:  # once per model class: a failed class attribute lookup is slow
        name = _provider_names[cls] = _PROVIDERS.get(getattr(cls, "provider", ""), "_OTHER")
    return name


_provider_names: dict[type, str] = {}
"""The conventions' provider name of each model class seen."""


def server_attributes(model: Any) -> dict[str, str | int]:
    """`server.address` / `server.port` of the model's endpoint (never its credentials)."""
    base_url = getattr(model, "base_url", None)
    if not isinstance(base_url, str) or not base_url:
        return {}
    try:
        parts = urlsplit(base_url)
        host, port = parts.hostname, parts.port
    except ValueError:
        return {}
    out: dict[str, str | int] = {}
    if host:
        out["server.address"] = host
        if port:
            out["server.port"] = port
    return out


def error_type(exc: BaseException) -> str:
    """`error.type`: the exception's fully qualified class name."""
    cls = type(exc)
    return (
        cls.__qualname__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__qualname__}"
    )


def msg_parts(blocks: list[Any]) -> list[dict[str, Any]]:
    """A message's blocks as the conventions' message parts (text redacted)."""
    parts: list[dict[str, Any]] = []
    for block in blocks:
        if isinstance(block, TextBlock):
            parts.append({"type": "text", "content": redact(block.text)})
        elif isinstance(block, ThinkingBlock):
            parts.append({"type": "reasoning", "content": redact(block.thinking)})
        elif isinstance(block, ToolCallBlock):
            parts.append(
                {
                    "type": "tool_call",
                    "id": block.id,
                    "name": block.name,
                    "arguments": _args(block.input),
                }
            )
        elif isinstance(block, ToolResultBlock):
            parts.append(
                {"type": "tool_call_response", "id": block.id, "response": result_text(block)}
            )
    return parts


def _args(text: str) -> Any:
    try:
        return json.loads(redact(text))
    except ValueError:
        return redact(text)


def result_text(block: Any) -> str:
    """A tool result's output as text (non-text parts named, not included)."""
    output = block.output
    if isinstance(output, str):
        return redact(output)
    pieces = [getattr(part, "text", f"[{getattr(part, 'type', 'data')}]") for part in output]
    return redact("\n".join(pieces))


@dataclass(slots=True)
class ReplyTrace:
    """One reply stream's span and what its hooks learn along the way."""

    span: trace.Span
    state: Any
    session_id: str
    capture: bool
    """Whether contents go into this reply's spans (decided once, at its start)."""
    context: otel_context.Context
    """The reply's span and this record: what is current while one of its steps runs."""
    metered: bool
    """Whether this reply's metrics go anywhere (decided once, at its start)."""
    reply_id: str = ""
    decisions: dict[str, tuple[str, str, bool | None]] = field(default_factory=dict)
    """Call id → (behavior, reason, confirmed by the user) until its tool span starts."""
    spanned: set[str] = field(default_factory=set)
    """Calls that have their `execute_tool` span."""
    plugins: list[str] = field(default_factory=list)
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None
    outcome: str = "incomplete"
    pause_kinds: list[str] = field(default_factory=list)
    chat_model: Any = None
    """The model `chat` was made for (the reply's last model)."""
    chat: Any = None
    """Its `chat` span name, metric attributes and span start attributes in this reply."""

    def stamp(self) -> None:
        """Write the span's ids into the reply `Msg` (once), so a later resume links to it."""
        if self.reply_id:
            return
        state = self.state
        cursor = getattr(state, "reply", None)
        if cursor is None:
            return
        self.reply_id = cursor.reply_id  # an attribute of the span when it ends
        span_context = self.span.get_span_context()
        msg = state.reply_msg() if span_context.is_valid else None
        if msg is not None:
            msg.metadata[TRACE_METADATA] = {
                "trace_id": format(span_context.trace_id, "032x"),
                "span_id": format(span_context.span_id, "016x"),
            }

    def add_usage(self, tokens: tuple[int, int] | None, cost: float | None) -> None:
        """Count one model call's tokens and cost into the reply's totals."""
        if tokens is not None:
            self.input_tokens += tokens[0]
            self.output_tokens += tokens[1]
        if cost is not None:
            self.cost = cost if self.cost is None else self.cost + cost


def previous_span(state: Any, reply_id: str) -> trace.SpanContext | None:
    """The span context stamped into the paused reply `reply_id`, if any."""
    cursor = getattr(state, "reply", None)
    if cursor is None or cursor.reply_id != reply_id:
        return None
    msg = state.reply_msg()
    stamped = msg.metadata.get(TRACE_METADATA) if msg is not None else None
    if not isinstance(stamped, dict):
        return None
    try:
        span_context = trace.SpanContext(
            trace_id=int(stamped["trace_id"], 16),
            span_id=int(stamped["span_id"], 16),
            is_remote=True,
            trace_flags=trace.TraceFlags(trace.TraceFlags.SAMPLED),
        )
    except (KeyError, TypeError, ValueError):
        return None
    return span_context if span_context.is_valid else None


_RESUME_KINDS = {
    "user_confirm_result": "user_confirm",
    "external_execution_result": "external_execution",
    "user_interrupt": "interrupt",
}


@dataclass(frozen=True, slots=True)
class Resume:
    """What a reply stream that resumes (or continues) a reply starts from."""

    kind: str
    """`user_confirm`, `external_execution`, `interrupt`, or `continue` (inputs None)."""
    links: list[trace.Link] | None
    """A link to the span of the reply's previous stream, if its ids were kept."""
    decisions: dict[str, tuple[str, str, bool | None]]
    """The user's answers, by call id: ("ask", why, confirmed)."""


def resume_of(inputs: Any, state: Any) -> Resume | None:
    """How these inputs resume the state's reply, or None when they start a new one."""
    if type(inputs) in _RESUMES:  # (a failed getattr on a Msg is slow; so is isinstance)
        kind, reply_id = _RESUME_KINDS[str(inputs.type)], inputs.reply_id
    elif inputs is None and getattr(state, "reply", None) is not None:
        kind, reply_id = "continue", state.reply.reply_id
    else:
        return None
    previous = previous_span(state, reply_id)
    links = [trace.Link(previous, {"tether.link.kind": "resumes"})] if previous else None
    decisions: dict[str, tuple[str, str, bool | None]] = {}
    if type(inputs) is UserConfirmResultEvent:
        for answer in inputs.confirm_results:
            why = "confirmed by the user" if answer.confirmed else "rejected by the user"
            decisions[answer.tool_call.id] = ("ask", why, answer.confirmed)
    return Resume(kind, links, decisions)


def tool_attributes(
    name: str, call_id: str, behavior: str, reason: str, confirmed: bool | None
) -> dict[str, Any]:
    attributes: dict[str, Any] = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.id": call_id,
        "gen_ai.tool.type": "function",
    }
    if behavior == "allow" and not reason and confirmed is None:  # the common case
        attributes["tether.permission.behavior"] = behavior
        return attributes
    if behavior:
        attributes["tether.permission.behavior"] = behavior
        if reason:
            attributes["tether.permission.reason"] = reason
    if confirmed is not None:
        attributes["tether.permission.confirmed"] = confirmed
    return attributes


def record_error(span: trace.Span, exc: BaseException) -> None:
    kind = error_type(exc)
    message = redact(str(exc))
    span.set_attribute("error.type", kind)
    span.add_event("exception", {"exception.type": kind, "exception.message": message})
    span.set_status(Status(StatusCode.ERROR, message))


def is_cancel(exc: BaseException) -> bool:
    return not isinstance(exc, Exception)  # CancelledError, GeneratorExit, KeyboardInterrupt
