"""Turn chat-completions chunks (OpenAI-compatible APIs, DashScope) into deltas."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tether.message import ChatUsage
from tether.model._types import (
    ModelDelta,
    TextDelta,
    ThinkingDelta,
    ToolCallDelta,
    UsageDelta,
    new_text_delta,
    set_delta_text,
)
from tether.model.providers._base import Opened
from tether.model.providers._names import ToolNames
from tether.model.providers._tool_proxy import ProxyCalls

__all__ = ["ChatChunkParser", "extra", "open_chat_completion"]


def extra(obj: Any, *names: str) -> Any:
    """The first non-empty one of fields a provider adds to the OpenAI schema, or `None`.

    E.g. `extra(delta, "reasoning_content", "reasoning")`.
    """
    # Read the instance dicts directly: a missed `getattr` on a pydantic model raises and
    # catches an AttributeError, which costs more than the rest of the chunk's handling.
    for fields in (getattr(obj, "__dict__", None), getattr(obj, "__pydantic_extra__", None)):
        if fields:
            for name in names:
                value = fields.get(name)
                if value:
                    return value
    return None


class ChatChunkParser:
    """Deltas of one streamed answer's choice 0, with tool calls kept apart.

    Calls are merged by their `index`; a new non-empty `id` at an index that already has
    another call (some servers reuse index 0, or send none) starts a new call. A call whose
    id another call of the answer already has gets a variant, so each result pairs with
    one call. With `proxy`, calls of the proxy tool are held back and given at the end as
    the plugin tool calls they stand for (`ProxyCalls`).
    """

    __slots__ = (
        "_ids",
        "_last",
        "_names",
        "_proxy",
        "_sent",
        "_slots",
        "_usage",
        "last_usage",
        "stop",
    )

    def __init__(
        self,
        usage: Callable[[Any], ChatUsage],
        names: ToolNames | None = None,
        *,
        proxy: bool = False,
    ) -> None:
        self._names = names
        self._proxy = ProxyCalls() if proxy else None
        self._slots: dict[int | None, int] = {}
        self._ids: dict[int, str] = {}
        self._sent: dict[int, str] = {}  # the id each call got, unique within the answer
        self._last = -1
        self._usage = usage
        self.last_usage: Any = None
        self.stop: str | None = None
        """The finish reason, once the chunk carrying it arrived."""

    def stopped(self) -> str | None:
        """The finish reason, or `None` while the answer is not complete."""
        return self.stop

    def chunk(self, chunk: Any) -> list[ModelDelta]:
        """The deltas of one streamed chunk; its usage is kept for `finish`."""
        usage = chunk.usage
        if usage is not None:
            self.last_usage = usage  # DashScope repeats a cumulative count in every frame
        for choice in chunk.choices:
            if choice.index == 0:
                reason = choice.finish_reason
                if reason is not None and reason != "null":  # DashScope sends the string "null"
                    self.stop = reason
                message = choice.delta
                if message is None:
                    return []
                content = message.content
                fields = message.__dict__
                if (  # the common chunk, a piece of the answer and nothing else: made here
                    content
                    and isinstance(content, str)
                    and not message.tool_calls
                    and not fields.get("reasoning_content")
                    and not fields.get("reasoning")
                    and not getattr(message, "__pydantic_extra__", None)
                ):
                    delta = new_text_delta()
                    set_delta_text(delta, content)
                    return [delta]
                return self.message(message)
        return []

    def completion(self, completion: Any) -> list[ModelDelta]:
        """The deltas of a whole (non-streamed) completion."""
        deltas: list[ModelDelta] = []
        if completion.choices:
            choice = completion.choices[0]
            deltas = self.message(choice.message)
            if self._proxy is not None:
                deltas.extend(self._proxy.release())
            reason = choice.finish_reason
            self.stop = reason if reason and reason != "null" else "stop"
        if completion.usage is not None:
            deltas.append(UsageDelta(self._usage(completion.usage)))
        return deltas

    def finish(self) -> list[ModelDelta]:
        """The held proxy calls and the usage of the stream, once it has ended."""
        deltas: list[ModelDelta] = [] if self._proxy is None else [*self._proxy.release()]
        if self.last_usage is not None:
            deltas.append(UsageDelta(self._usage(self.last_usage)))
        return deltas

    def _slot(self, index: int | None, call_id: str | None) -> int:
        slot = self._slots.get(index)
        if slot is None or (call_id and self._ids.get(slot, call_id) != call_id):
            if call_id and index is None:
                for known, known_id in self._ids.items():
                    if known_id == call_id:
                        return known
            self._last += 1
            slot = self._last
            self._slots[index] = slot
        if call_id:
            self._ids.setdefault(slot, call_id)
        return slot

    def _unique(self, slot: int, call_id: str) -> str:
        """`call_id`, or a variant if another call of this answer already has it."""
        sent = self._sent.get(slot)
        if sent is None:
            taken = set(self._sent.values())
            sent = call_id if call_id not in taken else f"{call_id}_{slot}"
            self._sent[slot] = sent
        return sent

    def message(self, message: Any) -> list[ModelDelta]:
        """The deltas of a delta (streaming) or a whole message (non-streaming)."""
        content = message.content
        calls = message.tool_calls
        # `extra(message, "reasoning_content", "reasoning")`, written out: once per chunk
        fields = message.__dict__
        reasoning = fields.get("reasoning_content") or fields.get("reasoning")
        if not reasoning:
            more = getattr(message, "__pydantic_extra__", None)
            if more:
                reasoning = more.get("reasoning_content") or more.get("reasoning")
        if not calls and not reasoning:  # the common chunk: a piece of the answer
            if not content or not isinstance(content, str):
                return []
            delta = new_text_delta()
            set_delta_text(delta, content)
            return [delta]
        deltas: list[ModelDelta] = []
        if isinstance(reasoning, str) and reasoning:
            deltas.append(ThinkingDelta(text=reasoning))
        if isinstance(content, str) and content:
            deltas.append(TextDelta(text=content))
        for call in calls or ():
            fn = call.function
            name = getattr(fn, "name", None) if fn is not None else None
            args = getattr(fn, "arguments", None) if fn is not None else None
            call_id = call.id or None
            if name and self._names is not None:
                name = self._names.original(name)
            slot = self._slot(getattr(call, "index", None), call_id)
            call_delta = ToolCallDelta(
                index=slot,
                id=None if call_id is None else self._unique(slot, call_id),
                name=name or None,
                arguments=args if isinstance(args, str) else "",
            )
            if self._proxy is None or not self._proxy.take(call_delta):
                deltas.append(call_delta)
        return deltas


async def open_chat_completion(
    client: Any,
    params: dict[str, Any],
    usage: Any,
    *,
    stream: bool,
    names: ToolNames | None = None,
    proxy: bool = False,
) -> Opened:
    """Send a chat-completions request (OpenAI or DashScope compatible) and wrap the answer.

    `names` maps the tool names the model calls back to the toolkit's; `proxy`: the
    request sent `PROXY_TOOL`, whose calls become the plugin tool calls they stand for.
    """
    parser = ChatChunkParser(usage, names, proxy=proxy)
    answer = await client.chat.completions.create(**params)
    if not stream:
        return Opened([answer], parser.completion, parser.stopped)
    return Opened(answer, parser.chunk, parser.stopped, parser.finish)
