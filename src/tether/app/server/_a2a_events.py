"""tether's logged events as A2A task updates, through `a2a-sdk`'s `TaskUpdater`.

Each text block of the reply streams as an artifact (its id the block's, chunks appended,
the last marked `lastChunk`); the deltas of one batch read from the log go out as one chunk
(every chunk is a write of the task). A structured answer is a `structured_output`
artifact with one data part. The reply's end completes the task with the final message as the status
message; a confirmation request or external tool calls make it `input-required` (the
question, and a data part listing the calls); an error fails it.
"""

from __future__ import annotations

import json
from typing import Any

from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import Part

from tether.app.server._a2a_input import ANSWER_HINT
from tether.event import (
    AgentEvent,
    ErrorEvent,
    ReplyEndEvent,
    RequireExternalExecutionEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
)
from tether.message import ToolCallBlock

__all__ = ["A2ATranslator", "question"]


class A2ATranslator:
    """Publishes one run's tether events as updates of its A2A task."""

    def __init__(self, updater: TaskUpdater) -> None:
        self.updater = updater
        self.finished = False
        self._pending: dict[str, list[str]] = {}  # block id → deltas not sent yet
        self._sent: set[str] = set()  # blocks with a chunk sent

    async def put(self, event: AgentEvent) -> None:
        """Publish what the event means for the task (most events mean nothing)."""
        match event:
            case TextBlockDeltaEvent() if event.delta:
                self._pending.setdefault(event.block_id, []).append(event.delta)
            case TextBlockEndEvent():
                text = "".join(self._pending.pop(event.block_id, ()))
                if text:
                    await self._chunk(event.block_id, text, last=True)
            case RequireUserConfirmEvent():
                await self._ask(question(event.tool_calls), event.tool_calls)
            case RequireExternalExecutionEvent():
                text = (
                    "Run these tools and send their results: a data part "
                    '{"toolResults": [{"toolCallId": ..., "output": ..., "isError"?: bool}]}.'
                )
                await self._ask(text, event.tool_calls)
            case ReplyEndEvent():
                await self._end(event)
            case ErrorEvent():
                await self.fail(f"{event.error_type}: {event.message}")

    async def fail(self, text: str) -> None:
        """End the task as failed, `text` its status message."""
        self.finished = True
        await self.updater.failed(self.updater.new_agent_message([new_text_part(text)]))

    async def flush(self) -> None:
        """Send the text gathered so far, holding back each block's last delta.

        The held delta goes with the block's end, as the chunk marked `lastChunk`.
        """
        for block_id, deltas in self._pending.items():
            if len(deltas) > 1:
                await self._chunk(block_id, "".join(deltas[:-1]), last=False)
                del deltas[:-1]

    async def _chunk(self, block_id: str, text: str, *, last: bool) -> None:
        await self.updater.add_artifact(
            [new_text_part(text)],
            artifact_id=block_id,
            name="text",
            append=block_id in self._sent,
            last_chunk=last,
        )
        self._sent.add(block_id)

    async def _ask(self, text: str, calls: list[ToolCallBlock]) -> None:
        self.finished = True
        parts = [new_text_part(text), new_data_part({"toolCalls": [_call(c) for c in calls]})]
        await self.updater.requires_input(self.updater.new_agent_message(parts))

    async def _end(self, event: ReplyEndEvent) -> None:
        self.finished = True
        structured = event.msg.metadata.get("structured_output")
        if structured is not None:
            await self.updater.add_artifact(
                [new_data_part(structured)], name="structured_output", last_chunk=True
            )
        parts: list[Part] = [new_text_part(event.msg.get_text_content() or "")]
        await self.updater.complete(self.updater.new_agent_message(parts))


def question(calls: list[ToolCallBlock]) -> str:
    """The question a confirmation request asks, with how to answer it."""
    asks = "; ".join(f"{c.name} with {c.input or '{}'}" for c in calls)
    return f"Allow the call to {asks}? {ANSWER_HINT}"


def _call(call: ToolCallBlock) -> dict[str, Any]:
    try:
        arguments: Any = json.loads(call.input or "{}")
    except ValueError:
        arguments = call.input
    return {
        "id": call.id,
        "name": call.name,
        "arguments": arguments,
        "suggestedRules": [r.model_dump(mode="json") for r in call.suggested_rules],
    }
