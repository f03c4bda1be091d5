"""`TracingMiddleware`: OpenTelemetry spans, metrics and logs in the GenAI vocabulary.

Spans: `invoke_agent {agent}` (INTERNAL) around a reply stream, `chat {model}` (CLIENT)
around each model call (retries and fallback included), `execute_tool {tool}` (INTERNAL)
around each tool call (a denied call gets a zero-length one), `compress_context`
(INTERNAL) around a compression. The reply's span is current only while one of its steps
runs: it is attached before the loop is asked for the next event and detached before the
event is handed on, so nothing leaks into the caller between events, and concurrent tool
calls (each in its own task) parent to it.

A paused reply's span ends with `tether.reply.outcome="paused"` (status unset: a pause
is not an error); its trace and span ids are kept in the reply message's
`metadata["trace"]`, which travels with the saved state, so the reply resumed in
another process links to it.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from tether import __version__
from tether._log import get_logger, record, redact, redact_repeated, register_secret
from tether.middleware._base import MiddlewareBase
from tether.middleware._calls import (
    ActingCall,
    CompressCall,
    ModelCall,
    PermissionCall,
    ReplyCall,
)
from tether.middleware._chain import close_stream
from tether.middleware._metrics import (
    Instruments,
    ProviderSwitch,
    env_provider,
    metrics_switch,
    no_global,
)
from tether.middleware._tracing_model import DELTA_KINDS, PART, ModelWatch, request_content
from tether.middleware._tracing_parts import (
    REPLY_KEY,
    ReplyTrace,
    attach,
    current_reply,
    detach,
    error_type,
    get_current,
    is_cancel,
    provider_name,
    record_error,
    result_text,
    resume_of,
    server_attributes,
    tool_attributes,
    with_span,
)

__all__ = ["TracingMiddleware"]

_CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"
_PAUSE_KINDS = {
    "require_user_confirm": "user_confirm",
    "require_external_execution": "external_execution",
}
_reply_log = get_logger("reply")
_model_log = get_logger("model")
_tool_log = get_logger("tool")
_permission_log = get_logger("permission")  # (`getLogger` takes the logging lock: once)
_INTERNAL = SpanKind.INTERNAL
_OBSERVED = frozenset(
    {
        "reply_end",
        "require_user_confirm",
        "require_external_execution",
        "tool_result_end",
        "plugin_activated",
        "plugin_slept",
    }
)
"""The reply events `_observe` reads (the others pass with one set lookup)."""
_NO_DECISION: tuple[str, str, bool | None] = ("", "", None)
_NO_CONTEXT = otel_context.Context()  # (a placeholder until the reply's own is made)


class TracingMiddleware(MiddlewareBase):
    """Traces, metrics and structured logs of every reply, model call and tool call.

    Install it first (outermost) so its spans cover the other middlewares' work:
    `Agent(..., middlewares=[TracingMiddleware()])`. It does nothing (and costs next to
    nothing) until an OpenTelemetry SDK tracer or meter provider is set, globally or
    here, or the `tether` loggers are on (`TETHER_LOG=info`).

    Message and tool contents are recorded only when `capture_content=True`, or when it
    is left `None` and `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true` when
    the middleware is made. Whatever is recorded passes `tether._log.redact` first.
    `conversation_id` sets `gen_ai.conversation.id` (default: the state's `session_id`);
    `provider_name` overrides `gen_ai.provider.name`.
    """

    watches_all_events = False
    passes_through = True
    """Its hooks pass the call on unchanged, yield exactly what `call_next` yields and close
    that stream when they end early (read by the chain to nest it without a closing layer)."""

    def __init__(
        self,
        *,
        tracer_provider: trace.TracerProvider | None = None,
        meter_provider: Any | None = None,
        capture_content: bool | None = None,
        conversation_id: str | None = None,
        provider_name: str | None = None,
    ) -> None:
        self._tracing_on = ProviderSwitch(
            tracer_provider,
            trace,
            "_TRACER_PROVIDER",
            trace.get_tracer_provider,
            (trace.ProxyTracerProvider, trace.NoOpTracerProvider),
        )
        self._metrics_on = metrics_switch(meter_provider)
        # Neither provider given nor named by env: only the API globals can turn it on.
        self._globals_only = (
            tracer_provider is None and meter_provider is None and not (env_provider())
        )
        self._always_on = (tracer_provider is not None and self._tracing_on()) or (
            meter_provider is not None and self._metrics_on()
        )
        self._tracer = trace.get_tracer("tether", __version__, tracer_provider=tracer_provider)
        self._metrics = Instruments(meter_provider, __version__)
        self.capture_content = capture_content
        self._capture_env = os.environ.get(_CAPTURE_ENV, "").strip().lower() == "true"
        self.conversation_id = conversation_id
        self.provider_name = provider_name
        self._models: dict[tuple[Any, ...], tuple[str, dict[str, Any], dict[str, Any]]] = {}
        self._agents: dict[tuple[Any, ...], tuple[str, dict[str, Any]]] = {}

    @property
    def is_active(self) -> bool:
        """Whether spans, metrics or logs go anywhere now (asked at every hook: cheap)."""
        if self._always_on:  # a live provider was given: that never changes
            return True
        if self._globals_only and no_global():  # the common "nothing set up": one look each
            return _reply_log.isEnabledFor(logging.INFO)
        return self._tracing_on() or self._metrics_on() or _reply_log.isEnabledFor(logging.INFO)

    @property
    def captures_content(self) -> bool:
        """Whether message and tool contents go into spans (the variable is read once)."""
        if self.capture_content is not None:
            return self.capture_content
        return self._capture_env

    # -- the reply -------------------------------------------------------------------

    async def on_reply(
        self, call: ReplyCall, call_next: Callable[[ReplyCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Run the reply inside its `invoke_agent` span, attached only while it steps."""
        reply = self._open_reply(call)
        stream, context = call_next(call), reply.context
        failure: BaseException | None = None
        token = attach(context)
        try:
            # The span is current while the loop steps (the stream's `anext`), and detached
            # before each event is handed on: never across a `yield`.
            async for event in stream:
                detach(token)
                token = None
                if not reply.reply_id:
                    reply.stamp()
                event_type = getattr(event, "type", None)
                if event_type in _OBSERVED:
                    self._observe(reply, event, event_type)
                yield event
                token = attach(context)
            detach(token)
        except GeneratorExit:
            reply.outcome = "closed"
            await close_stream(stream)  # inner first: the loop's work ends before this span
            raise
        except BaseException as exc:
            if token is not None:  # the stream raised
                detach(token)
            failure = exc
            await close_stream(stream)  # (a stream that raised is over: a no-op then)
            raise
        finally:
            self._close_reply(reply, failure)

    def _open_reply(self, call: ReplyCall) -> ReplyTrace:
        agent, state = call.agent, call.state
        model = agent.model
        for each in (model, getattr(agent.model_config, "fallback_model", None)):
            credential = getattr(each, "credential", None)
            if credential is not None:
                register_secret(credential.get_api_key())
        session_id = getattr(state, "session_id", "") or ""
        name, attributes = self._agent_constants(agent.name, model)
        conversation_id = self.conversation_id or session_id
        resume = resume_of(call.inputs, state)
        if conversation_id or resume is not None:
            attributes = dict(attributes)
            if conversation_id:
                attributes["gen_ai.conversation.id"] = conversation_id
            if resume is not None:
                attributes["tether.reply.resumed"] = True
                attributes["tether.resume.kind"] = resume.kind
        span = self._tracer.start_span(
            name,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            links=resume.links if resume is not None else None,
        )
        reply = ReplyTrace(span, state, session_id, self.captures_content, _NO_CONTEXT)
        reply.context = otel_context.set_value(REPLY_KEY, reply, trace.set_span_in_context(span))
        if resume is not None:
            reply.decisions.update(resume.decisions)
            reply.stamp()  # the resumed reply is in the state already
        return reply

    def _agent_constants(self, agent_name: str, model: Any) -> tuple[str, dict[str, Any]]:
        """An agent's span name and start attributes (made once; shared, never changed)."""
        key = (
            agent_name,
            type(model),
            model.model_name,
            getattr(model, "base_url", None),
            self.provider_name,
        )
        found = self._agents.get(key)
        if found is None:
            found = (
                f"invoke_agent {agent_name}",
                {
                    "gen_ai.operation.name": "invoke_agent",
                    "gen_ai.agent.name": agent_name,
                    "gen_ai.provider.name": provider_name(model, self.provider_name),
                    "gen_ai.request.model": model.model_name,
                },
            )
            if len(self._agents) >= 64:
                self._agents.clear()
            self._agents[key] = found
        return found

    def _observe(self, reply: ReplyTrace, event: Any, event_type: str) -> None:
        # Events carry their type: comparing it is cheaper than isinstance on pydantic classes.
        if event_type == "reply_end":
            reply.outcome = "finished"
        elif event_type in _PAUSE_KINDS:
            reply.outcome = "paused"
            kind = _PAUSE_KINDS[event_type]
            reply.pause_kinds.append(kind)
            ids = [c.id for c in event.tool_calls]
            reply.span.add_event(
                "tether.pause", {"tether.pause.kind": kind, "gen_ai.tool.call.id": ids}
            )
            self._metrics.count("pauses", {"tether.pause.kind": kind})
        elif event_type == "tool_result_end" and event.block_id not in reply.spanned:
            self._settled_tool_span(reply, event)
        elif event_type == "plugin_activated":
            reply.plugins.append(event.module_name)
            reply.span.add_event(
                "tether.plugin.activated",
                {
                    "tether.plugin.name": event.module_name,
                    "tether.plugin.rounds_left": event.rounds_left,
                },
            )
        elif event_type == "plugin_slept":
            reply.span.add_event("tether.plugin.slept", {"tether.plugin.name": event.module_name})

    def _settled_tool_span(self, reply: ReplyTrace, event: Any) -> None:
        """A call answered without running here (rejected, run outside, interrupted)."""
        result = event.tool_result
        reply.spanned.add(event.block_id)
        behavior, reason, confirmed = reply.decisions.pop(event.block_id, ("", "", None))
        attributes = tool_attributes(result.name, event.block_id, behavior, reason, confirmed)
        attributes["tether.tool.settled_by"] = "resume"
        span = self._tracer.start_span(
            f"execute_tool {result.name}",
            context=reply.context,  # the reply's span is not current between events
            kind=SpanKind.INTERNAL,
            attributes=attributes,
        )
        self._end_tool_span(span, result, result.name, None)

    def _close_reply(self, reply: ReplyTrace, failure: BaseException | None) -> None:
        span = reply.span
        if failure is not None:
            reply.outcome = "cancelled" if is_cancel(failure) else "error"
            if reply.outcome == "error":
                record_error(span, failure)
        ending: dict[str, Any] = {"tether.reply.outcome": reply.outcome}
        if reply.reply_id:
            ending["tether.reply.id"] = reply.reply_id
        if reply.pause_kinds:
            ending["tether.pause.kind"] = sorted(set(reply.pause_kinds))
        if reply.plugins:
            ending["tether.plugin.activations"] = reply.plugins
        if reply.input_tokens or reply.output_tokens:
            ending["gen_ai.usage.input_tokens"] = reply.input_tokens
            ending["gen_ai.usage.output_tokens"] = reply.output_tokens
        if reply.cost is not None:
            ending["tether.usage.cost"] = reply.cost
        span.set_attributes(ending)
        span.end()
        self._metrics.count("replies", {"tether.reply.outcome": reply.outcome})
        level = logging.WARNING if reply.outcome == "error" else logging.INFO
        if not _reply_log.isEnabledFor(level):
            return
        record(
            _reply_log,
            level,
            f"reply {reply.outcome}",
            reply_id=reply.reply_id,
            session_id=reply.session_id,
            outcome=reply.outcome,
            input_tokens=reply.input_tokens,
            output_tokens=reply.output_tokens,
            cost=reply.cost,
            error_type=error_type(failure) if reply.outcome == "error" and failure else None,
        )

    # -- model calls ----------------------------------------------------------------

    async def on_model_call(
        self, call: ModelCall, call_next: Callable[[ModelCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Run one model call (its retries and fallback too) inside a `chat` span."""
        context = get_current()
        reply = context.get(REPLY_KEY)
        model = call.model
        key = (type(model), model.model_name, getattr(model, "base_url", None), self.provider_name)
        name, base, attributes = self._models.get(key) or self._model_constants(model, key)
        if isinstance(reply, ReplyTrace):
            if not reply.reply_id:
                reply.stamp()
            capture = reply.capture
            if reply.session_id:
                attributes = {
                    **attributes,
                    "gen_ai.conversation.id": self.conversation_id or reply.session_id,
                }
        else:
            reply, capture = None, self.captures_content
        if capture:
            attributes = {**attributes, **request_content(call.request)}
        span = self._tracer.start_span(name, context, SpanKind.CLIENT, attributes)
        watch = ModelWatch(model.model_name, capture)
        span_context = with_span(span, context)
        started = time.perf_counter()
        stream = call_next(call)
        failure: BaseException | None = None
        kinds, metrics = DELTA_KINDS, self._metrics
        token = attach(span_context)
        try:
            async for item in stream:  # the span is current while the model streams, not across
                detach(token)  # a `yield` (as in `on_reply`)
                token = None
                kind = kinds[type(item)]
                if kind and (capture or kind != PART):
                    watch.see(kind, item, span, metrics, base)
                yield item
                token = attach(span_context)
            detach(token)
        except BaseException as exc:
            if token is not None:  # the stream raised
                detach(token)
            failure = exc
            await close_stream(stream)
            raise
        finally:
            self._end_model_span(span, watch, base, time.perf_counter() - started, failure, reply)

    def _model_constants(
        self, model: Any, key: tuple[Any, ...]
    ) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """A model's span name, metric attributes and span start attributes (made once).

        The dictionaries are shared: never changed, only copied.
        """
        base = {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": provider_name(model, self.provider_name),
            "gen_ai.request.model": model.model_name,
        }
        found = (f"chat {model.model_name}", base, {**base, **server_attributes(model)})
        if len(self._models) >= 64:  # (models made per call: keep the newest few)
            self._models.clear()
        self._models[key] = found
        return found

    def _end_model_span(
        self,
        span: trace.Span,
        watch: ModelWatch,
        base: dict[str, Any],
        seconds: float,
        failure: BaseException | None,
        reply: ReplyTrace | None,
    ) -> None:
        tokens, cost = watch.finish(span)
        failed = failure is not None and not is_cancel(failure)
        if failed:
            assert failure is not None
            record_error(span, failure)
        span.end()
        self._metrics.model_call(
            base,
            watch.response_model,
            error_type(failure) if failed and failure is not None else None,
            seconds,
            tokens,
            cost,
        )
        if reply is not None and (tokens is not None or cost is not None):
            reply.add_usage(tokens, cost)
        if not _model_log.isEnabledFor(logging.DEBUG):
            return
        record(
            _model_log,
            logging.DEBUG,
            "model call ended",
            reply_id=reply.reply_id if reply else None,
            model=watch.response_model,
            input_tokens=tokens[0] if tokens else None,
            output_tokens=tokens[1] if tokens else None,
            cost=cost,
            finish_reason=watch.finish_reason,
            error_type=error_type(failure) if failure is not None else None,
        )

    # -- permissions and tools ------------------------------------------------------

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
            self._end_tool_span(
                span,
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

    def _end_tool_span(
        self,
        span: trace.Span,
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
        self._metrics.tool_call(name, outcome, seconds)

    # -- compression ----------------------------------------------------------------

    async def on_compress_context(
        self, call: CompressCall, call_next: Callable[[CompressCall], Awaitable[Any]]
    ) -> Any:
        """Record a compression that happened as a `compress_context` span.

        Every reasoning step asks whether to compress; only the steps that did (or
        failed trying) get a span, back-dated to when the check began.
        """
        started = time.time_ns()
        try:
            result = await call_next(call)
        except Exception as exc:
            span = self._compress_span(call, started)
            record_error(span, exc)
            span.end()
            raise
        if getattr(result, "type", None) == "context_compressed":
            span = self._compress_span(call, started)
            span.set_attributes(
                {
                    "tether.compression.before_tokens": result.before_tokens,
                    "tether.compression.after_tokens": result.after_tokens,
                    "tether.compression.messages": result.compressed_messages,
                    "tether.compression.summarised": result.summarised,
                    "tether.compression.offloaded": result.offload_path is not None,
                }
            )
            span.end()
        return result

    def _compress_span(self, call: CompressCall, started: int) -> trace.Span:
        attributes = {"tether.reply.id": call.reply_id} if call.reply_id else {}
        return self._tracer.start_span(
            "compress_context", kind=SpanKind.INTERNAL, attributes=attributes, start_time=started
        )
