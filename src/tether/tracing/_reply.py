"""The `invoke_agent` span: one reply stream, attached only while the loop steps."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry.trace import SpanKind

from tether._log import get_logger, record, register_secret
from tether._streams import close_stream
from tether.middleware import ReplyCall
from tether.tracing._base import TracingBase
from tether.tracing._parts import (
    ReplyTrace,
    attach,
    detach,
    error_type,
    is_cancel,
    provider_name,
    record_error,
    resume_of,
    with_reply,
)
from tether.tracing._tools import denied_tool_span, permission_logged, settled_tool_span

__all__ = ["ReplyHooks"]

_PAUSE_KINDS = {
    "require_user_confirm": "user_confirm",
    "require_external_execution": "external_execution",
}
_reply_log = get_logger("reply")
_permission_log = get_logger("permission")
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
_NO_CONTEXT = otel_context.Context()  # (a placeholder until the reply's own is made)


class ReplyHooks(TracingBase):
    """`on_reply`: the reply's span, what its events say, and its ending attributes."""

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
        reply = ReplyTrace(
            span, state, session_id, self.captures_content, _NO_CONTEXT, self._metrics.on()
        )
        reply.context = with_reply(span, reply)
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
            if reply.metered:
                self._metrics.count("pauses", {"tether.pause.kind": kind})
            if kind == "user_confirm":
                self._asked(reply, event.tool_calls)
        elif event_type == "tool_result_end" and event.block_id not in reply.spanned:
            if event.tool_result.state == "denied" and event.block_id not in reply.decisions:
                denied_tool_span(self._tracer, self._metrics, reply, event)
            else:
                settled_tool_span(self._tracer, self._metrics, reply, event)
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

    def _asked(self, reply: ReplyTrace, calls: list[Any]) -> None:
        """The calls the permission check asked the user about (the reply pauses)."""
        logged = _permission_log.isEnabledFor(logging.INFO)
        for call in calls:
            reply.span.add_event(
                "tether.permission.ask",
                {"gen_ai.tool.name": call.name, "gen_ai.tool.call.id": call.id},
            )
            if reply.metered:
                self._metrics.permission_decision("ask", call.name)
            if logged:
                permission_logged(logging.INFO, "ask", call.name, call.id, reply)

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
        if reply.metered:
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
