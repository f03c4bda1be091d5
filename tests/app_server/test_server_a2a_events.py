"""tether events as A2A task updates: chunked text artifacts, structured output, pauses."""

from __future__ import annotations

from typing import Any

from a2a.helpers.proto_helpers import get_data_parts, get_message_text, get_text_parts
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import TaskArtifactUpdateEvent, TaskState, TaskStatusUpdateEvent

from tether.app.server._a2a_events import A2ATranslator
from tether.event import (
    ErrorEvent,
    ReplyEndEvent,
    RequireUserConfirmEvent,
    TextBlockDeltaEvent,
    TextBlockEndEvent,
)
from tether.message import AssistantMsg, ToolCallBlock


class Collect:
    """Stands in for the SDK's event queue: keeps what is enqueued."""

    def __init__(self) -> None:
        self.events: list[Any] = []

    async def enqueue_event(self, event: Any) -> None:
        self.events.append(event)


def translator() -> tuple[A2ATranslator, Collect]:
    queue = Collect()
    return A2ATranslator(TaskUpdater(queue, "t1", "c1")), queue  # type: ignore[arg-type]


async def test_text_blocks_stream_as_chunked_artifacts() -> None:
    out, queue = translator()
    for batch in (["a", "b", "c"], ["d"], ["e", "f"]):  # as read from the log
        for delta in batch:
            await out.put(TextBlockDeltaEvent(reply_id="r", block_id="b1", delta=delta))
        await out.flush()
    await out.put(TextBlockEndEvent(reply_id="r", block_id="b1"))
    await out.put(TextBlockEndEvent(reply_id="r", block_id="empty"))
    chunks = [e for e in queue.events if isinstance(e, TaskArtifactUpdateEvent)]
    texts = [list(get_text_parts(c.artifact.parts)) for c in chunks]
    assert texts == [["ab"], ["c"], ["de"], ["f"]], "one chunk per batch, the last delta held"
    assert [(c.append, c.last_chunk) for c in chunks] == [
        (False, False),
        (True, False),
        (True, False),
        (True, True),
    ]
    assert {c.artifact.artifact_id for c in chunks} == {"b1"}
    assert not out.finished


async def test_a_short_block_is_one_last_chunk() -> None:
    out, queue = translator()
    await out.put(TextBlockDeltaEvent(reply_id="r", block_id="b2", delta="hi"))
    await out.flush()
    await out.put(TextBlockEndEvent(reply_id="r", block_id="b2"))
    (chunk,) = queue.events
    assert (chunk.append, chunk.last_chunk) == (False, True)
    assert list(get_text_parts(chunk.artifact.parts)) == ["hi"]


async def test_structured_output_is_a_data_artifact_and_the_final_message_the_status() -> None:
    out, queue = translator()
    msg = AssistantMsg("assistant", "It rains.", metadata={"structured_output": {"rain": True}})
    await out.put(ReplyEndEvent(reply_id="r", msg=msg))
    artifact, status = queue.events
    assert isinstance(artifact, TaskArtifactUpdateEvent)
    assert artifact.artifact.name == "structured_output"
    assert get_data_parts(artifact.artifact.parts) == [{"rain": True}]
    assert isinstance(status, TaskStatusUpdateEvent)
    assert status.status.state == TaskState.TASK_STATE_COMPLETED
    assert get_message_text(status.status.message) == "It rains."
    assert out.finished


async def test_pause_and_error() -> None:
    out, queue = translator()
    call = ToolCallBlock(id="c1", name="save_note", input='{"name": "a"}')
    await out.put(RequireUserConfirmEvent(reply_id="r", tool_calls=[call]))
    (asked,) = queue.events
    assert asked.status.state == TaskState.TASK_STATE_INPUT_REQUIRED
    assert get_message_text(asked.status.message).startswith(
        'Allow the call to save_note with {"name": "a"}? Answer "yes" or "no"'
    )
    (listed,) = get_data_parts(asked.status.message.parts)
    assert listed["toolCalls"][0]["arguments"] == {"name": "a"}
    failing, queue = translator()
    await failing.put(ErrorEvent(reply_id="r", error_type="ModelResponseError", message="no"))
    (failed,) = queue.events
    assert failed.status.state == TaskState.TASK_STATE_FAILED
    assert get_message_text(failed.status.message) == "ModelResponseError: no"
