"""Helpers of the A2A tests: an `a2a-sdk` client for `tether serve`, and messages."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
from a2a.client import Client, ClientConfig, create_client
from a2a.helpers.proto_helpers import new_data_part, new_text_part
from a2a.types.a2a_pb2 import Message, Role, SendMessageRequest, StreamResponse, Task, TaskState

ALICE = "key-alice-0123456789"
BOB = "key-bob-9876543210"


@asynccontextmanager
async def a2a_client(
    base: str, key: str | None = ALICE, *, binding: str = "JSONRPC", streaming: bool = True
) -> AsyncIterator[Client]:
    """A client of the `planner` agent, from its card (auth header from `key`)."""
    headers = {"authorization": f"Bearer {key}"} if key else {}
    async with httpx.AsyncClient(headers=headers, timeout=30) as http:
        config = ClientConfig(
            httpx_client=http, streaming=streaming, supported_protocol_bindings=[binding]
        )
        client = await create_client(f"{base}/a2a/planner", config)
        try:
            yield client
        finally:
            await client.close()


def message(
    text: str | None = None,
    *,
    data: Any = None,
    context_id: str | None = None,
    task_id: str | None = None,
) -> SendMessageRequest:
    """A user message (text and/or data part) as a `SendMessage` request."""
    parts = []
    if text is not None:
        parts.append(new_text_part(text))
    if data is not None:
        parts.append(new_data_part(data))
    msg = Message(message_id=uuid.uuid4().hex, role=Role.ROLE_USER, parts=parts)
    if context_id:
        msg.context_id = context_id
    if task_id:
        msg.task_id = task_id
    return SendMessageRequest(message=msg)


async def send(client: Client, request: SendMessageRequest) -> tuple[Task, list[StreamResponse]]:
    """Send; the task as it ends (or pauses) and every stream response."""
    responses = [r async for r in client.send_message(request)]
    task = Task()
    for r in responses:
        if r.HasField("task"):
            task.CopyFrom(r.task)
        elif r.HasField("status_update"):
            task.status.CopyFrom(r.status_update.status)
            task.id, task.context_id = r.status_update.task_id, r.status_update.context_id
    return task, responses


def state(task: Task) -> str:
    """The task's state name without its prefix: `completed`, `input_required`, ..."""
    return TaskState.Name(task.status.state).removeprefix("TASK_STATE_").lower()
