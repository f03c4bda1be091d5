"""The `chat` span: one model call's hook, what its stream says, and the request's content."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterator, Callable
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import SpanKind

from tether._log import get_logger, record, redact
from tether._streams import close_stream
from tether.middleware import ModelCall
from tether.model import RetryNotice, StopDelta, TextDelta, ToolCallDelta, UsageDelta
from tether.model import cost as price
from tether.tracing._base import TracingBase
from tether.tracing._metrics import Instruments
from tether.tracing._parts import (
    REPLY_KEY,
    ReplyTrace,
    attach,
    detach,
    error_type,
    get_current,
    is_cancel,
    msg_parts,
    provider_name,
    record_error,
    server_attributes,
    with_span,
)

__all__ = ["DELTA_KINDS", "PART", "ModelHooks", "ModelWatch", "request_content"]

_model_log = get_logger("model")

IGNORED, USAGE, STOP, RETRY, PART = range(5)
"""What `ModelWatch.see` does with an item (by its class: `DELTA_KINDS`)."""


class _Kinds(dict[type, int]):
    """Item class → what `ModelWatch.see` does with it (worked out on first sight)."""

    def __missing__(self, cls: type) -> int:
        kind = IGNORED
        for known, meaning in (
            (UsageDelta, USAGE),
            (StopDelta, STOP),
            (RetryNotice, RETRY),
            (TextDelta, PART),
            (ToolCallDelta, PART),
        ):
            if issubclass(cls, known):
                kind = meaning
                break
        if len(self) < 256:  # (a stream of ever new classes is not worth remembering)
            self[cls] = kind
        return kind


DELTA_KINDS = _Kinds()


class ModelWatch:
    """What one model call's stream says: usage, why it stopped, retries, the answer."""

    __slots__ = (
        "capture",
        "finish_reason",
        "raw_finish_reason",
        "parts",
        "request_model",
        "response_model",
        "retries",
        "usage",
    )

    def __init__(self, model_name: str, capture: bool) -> None:
        self.request_model = self.response_model = model_name
        self.capture = capture
        self.usage: Any = None
        self.finish_reason: str | None = None
        self.raw_finish_reason = ""
        self.retries = 0
        self.parts: list[Any] = []

    def see(
        self, kind: int, item: Any, span: trace.Span, metrics: Instruments, base: dict[str, Any]
    ) -> None:
        """Take one item of the stream, of kind `DELTA_KINDS[type(item)]`."""
        if kind == USAGE:
            self.usage = item.usage
        elif kind == STOP:
            self.finish_reason, self.raw_finish_reason = str(item.reason), item.raw
        elif kind == RETRY:
            self._retry(item, span, metrics, base)
        elif kind == PART and self.capture:  # a text or tool call piece
            self.parts.append(item)

    def _retry(
        self, notice: Any, span: trace.Span, metrics: Instruments, base: dict[str, Any]
    ) -> None:
        self.retries += 1
        fallback = notice.next_model_name != notice.model_name
        attributes = {
            "tether.retry.attempt": notice.attempt,
            "error.type": error_type(notice.error),
            "tether.retry.delay": notice.delay,
            "tether.retry.next_model": notice.next_model_name,
        }
        span.add_event("tether.model.fallback" if fallback else "tether.model.retry", attributes)
        metrics.count(
            "retries",
            {**base, "error.type": error_type(notice.error), "tether.retry.fallback": fallback},
        )
        self.response_model = notice.next_model_name
        record(
            _model_log,
            logging.WARNING,
            "model fallback" if fallback else "model retry",
            model=notice.model_name,
            attempt=notice.attempt,
            error_type=error_type(notice.error),
            error=str(notice.error),
            next_model=notice.next_model_name,
        )

    def finish(self, span: trace.Span) -> tuple[tuple[int, int] | None, float | None]:
        """Set the response attributes; return (input, output) tokens and the cost."""
        ending: dict[str, Any] = {"gen_ai.response.model": self.response_model}
        if self.finish_reason is not None:  # tether's words: the same for every provider
            ending["gen_ai.response.finish_reasons"] = [self.finish_reason]
            if self.raw_finish_reason and self.raw_finish_reason != self.finish_reason:
                ending["tether.response.finish_reason.raw"] = self.raw_finish_reason
        if self.retries:
            ending["tether.retry.attempts"] = self.retries
        if self.response_model != self.request_model:
            ending["tether.fallback.model"] = self.response_model
        if self.capture:
            ending["gen_ai.output.messages"] = self._output()
        usage, tokens, cost = self.usage, None, None
        if usage is not None:
            tokens = (usage.input_tokens, usage.output_tokens)
            ending["gen_ai.usage.input_tokens"] = usage.input_tokens
            ending["gen_ai.usage.output_tokens"] = usage.output_tokens
            ending["gen_ai.usage.cache_read.input_tokens"] = usage.cache_read_tokens
            ending["gen_ai.usage.cache_creation.input_tokens"] = usage.cache_write_tokens
            cost = usage.cost
            if cost is None:
                cost = price(usage, self.response_model)
            if cost is not None:
                ending["tether.usage.cost"] = cost
        span.set_attributes(ending)
        return tokens, cost

    def _output(self) -> str:
        text = "".join(p.text for p in self.parts if isinstance(p, TextDelta))
        calls: dict[int, dict[str, Any]] = {}
        for p in self.parts:
            if isinstance(p, ToolCallDelta):
                entry = calls.setdefault(
                    p.index, {"type": "tool_call", "id": "", "name": "", "arguments": ""}
                )
                entry["id"] = p.id or entry["id"]
                entry["name"] = p.name or entry["name"]
                entry["arguments"] += p.arguments
        parts: list[dict[str, Any]] = [{"type": "text", "content": redact(text)}] if text else []
        for entry in calls.values():
            entry["arguments"] = redact(entry["arguments"])
            parts.append(entry)
        message = {"role": "assistant", "parts": parts, "finish_reason": self.finish_reason or ""}
        return json.dumps([message], ensure_ascii=False)


def request_content(request: Any) -> dict[str, str]:
    messages = list(request.messages)
    out: dict[str, str] = {}
    if messages and messages[0].role == "system":
        system = messages.pop(0)
        out["gen_ai.system_instructions"] = json.dumps(
            msg_parts(system.content), ensure_ascii=False
        )
    rendered = [{"role": m.role, "parts": msg_parts(m.content)} for m in messages]
    out["gen_ai.input.messages"] = json.dumps(rendered, ensure_ascii=False)
    return out


class ModelHooks(TracingBase):
    """`on_model_call`: the `chat` span around one model call and its metrics."""

    async def on_model_call(
        self, call: ModelCall, call_next: Callable[[ModelCall], AsyncIterator[Any]]
    ) -> AsyncIterator[Any]:
        """Run one model call (its retries and fallback too) inside a `chat` span."""
        context = get_current()
        reply = context.get(REPLY_KEY)
        model = call.model
        if isinstance(reply, ReplyTrace):
            if not reply.reply_id:
                reply.stamp()
            capture, metered = reply.capture, reply.metered
            if reply.chat_model is not model:  # the reply's model again: made once a reply
                reply.chat_model, reply.chat = model, self._chat(model, reply.session_id)
            name, base, attributes = reply.chat
        else:
            reply, capture, metered = None, self.captures_content, self._metrics.on()
            name, base, attributes = self._chat(model, "")
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
            seconds = time.perf_counter() - started
            self._end_model_span(span, watch, base, seconds, failure, reply, metered)

    def _chat(self, model: Any, session_id: str) -> tuple[str, dict[str, Any], dict[str, Any]]:
        """A model's span name, metric attributes and span start attributes in a reply.

        The conversation id is added when the reply's state has a session id.
        """
        key = (type(model), model.model_name, getattr(model, "base_url", None), self.provider_name)
        name, base, attributes = self._models.get(key) or self._model_constants(model, key)
        if session_id:
            conversation = self.conversation_id or session_id
            attributes = {**attributes, "gen_ai.conversation.id": conversation}
        return name, base, attributes

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
        metered: bool,
    ) -> None:
        tokens, cost = watch.finish(span)
        failed = failure is not None and not is_cancel(failure)
        if failed:
            assert failure is not None
            record_error(span, failure)
        span.end()
        if metered:
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
