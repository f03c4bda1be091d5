"""A2A tasks kept in tether's session storage: the task store of `a2a-sdk`'s handler.

A task lives in the metadata of its context's session (`metadata["a2a_tasks"]`, task id →
the task's JSON), so it is stored wherever the sessions are (SQLite, Redis, PostgreSQL),
survives restarts, and any worker reads it. The owner is the caller (`call.user`): a
task of another user's session is not found.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.tasks import TaskStore
from a2a.types.a2a_pb2 import ListTasksRequest, ListTasksResponse, Task, TaskState
from a2a.utils.constants import DEFAULT_LIST_TASKS_PAGE_SIZE
from a2a.utils.errors import InvalidParamsError
from google.protobuf.json_format import MessageToDict, ParseDict

from tether.app.server._runs import Runs
from tether.app.storage import LogKey, SessionInfo

__all__ = ["KEEP_ENDED", "TASKS_KEY", "SessionTaskStore"]

TASKS_KEY = "a2a_tasks"
"""The session metadata key holding the context's tasks."""
KEEP_ENDED = 20
"""Ended tasks kept per context (the most recent); older ones are forgotten (the session
keeps their messages). Every task write rewrites the context's tasks: this bounds it."""
_ENDED = {
    TaskState.Name(TaskState.TASK_STATE_COMPLETED),
    TaskState.Name(TaskState.TASK_STATE_CANCELED),
    TaskState.Name(TaskState.TASK_STATE_FAILED),
    TaskState.Name(TaskState.TASK_STATE_REJECTED),
}


class SessionTaskStore(TaskStore):
    """The tasks of one agent's A2A contexts, in the sessions' metadata."""

    def __init__(self, runs: Runs, agent_id: str) -> None:
        self.runs = runs
        self.agent_id = agent_id

    async def save(self, task: Task, context: ServerCallContext) -> None:
        """Write the task into its context's session (created if new)."""
        user = context.user.user_name
        storage = self.runs.storage
        record = await self._session(user, task.context_id)
        metadata: dict[str, Any] = dict(record.metadata) if record is not None else {"a2a": True}
        tasks = dict(metadata.get(TASKS_KEY) or {})
        tasks[task.id] = MessageToDict(task)
        metadata[TASKS_KEY] = _recent(tasks)
        await storage.set_session_metadata(user, self.agent_id, task.context_id, metadata)
        if record is None:
            await self.runs.events.bind(LogKey(user, task.context_id), self.agent_id)

    async def get(self, task_id: str, context: ServerCallContext) -> Task | None:
        """The caller's task by id, or `None`."""
        for info in await self._sessions(context):
            found = (info.metadata.get(TASKS_KEY) or {}).get(task_id)
            if found is not None:
                return _task(found)
        return None

    async def list(self, params: ListTasksRequest, context: ServerCallContext) -> ListTasksResponse:
        """The caller's tasks, newest status first, filtered and paged as asked."""
        tasks = [
            _task(data)
            for info in await self._sessions(context)
            if not params.context_id or info.session_id == params.context_id
            for data in (info.metadata.get(TASKS_KEY) or {}).values()
        ]
        if params.status:
            tasks = [t for t in tasks if t.status.state == params.status]
        if params.HasField("status_timestamp_after"):
            after = params.status_timestamp_after.ToNanoseconds()
            tasks = [t for t in tasks if t.status.timestamp.ToNanoseconds() >= after]
        tasks.sort(key=lambda t: (t.status.timestamp.ToNanoseconds(), t.id), reverse=True)
        start = _offset(params.page_token)
        size = params.page_size or DEFAULT_LIST_TASKS_PAGE_SIZE
        page = tasks[start : start + size]
        more = start + size < len(tasks)
        return ListTasksResponse(
            tasks=page,
            next_page_token=str(start + size) if more else "",
            total_size=len(tasks),
            page_size=size,
        )

    async def delete(self, task_id: str, context: ServerCallContext) -> None:
        """Forget the task (the session and its messages stay)."""
        user = context.user.user_name
        for info in await self._sessions(context):
            tasks = dict(info.metadata.get(TASKS_KEY) or {})
            if tasks.pop(task_id, None) is not None:
                metadata = {**info.metadata, TASKS_KEY: tasks}
                await self.runs.storage.set_session_metadata(
                    user, self.agent_id, info.session_id, metadata
                )
                return

    async def waiting(self, user: str, context_id: str) -> bool:
        """A task of the context waits for input (read from the tasks, not the state)."""
        record = await self._session(user, context_id)
        tasks = (record.metadata.get(TASKS_KEY) or {}).values() if record is not None else ()
        wanted = TaskState.Name(TaskState.TASK_STATE_INPUT_REQUIRED)
        return any(t.get("status", {}).get("state") == wanted for t in tasks)

    async def _session(self, user: str, context_id: str) -> SessionInfo | None:
        """The context's session without its state (metadata only: no messages decoded)."""
        infos = await self.runs.storage.list_sessions(user, self.agent_id)
        return next((i for i in infos if i.session_id == context_id), None)

    async def _sessions(self, context: ServerCallContext) -> Sequence[SessionInfo]:
        infos = await self.runs.storage.list_sessions(context.user.user_name, self.agent_id)
        return [i for i in infos if i.metadata.get(TASKS_KEY)]


def _recent(tasks: dict[str, Any]) -> dict[str, Any]:
    """The tasks to keep: every open one and the `KEEP_ENDED` that ended last."""
    ended = [t for t, d in tasks.items() if d.get("status", {}).get("state") in _ENDED]
    if len(ended) <= KEEP_ENDED:
        return tasks
    ended.sort(key=lambda t: str(tasks[t].get("status", {}).get("timestamp", "")))
    dropped = set(ended[: len(ended) - KEEP_ENDED])
    return {t: d for t, d in tasks.items() if t not in dropped}


def _task(data: dict[str, Any]) -> Task:
    task = Task()
    ParseDict(data, task, ignore_unknown_fields=True)
    return task


def _offset(token: str) -> int:
    if not token:
        return 0
    if not token.isdigit():
        raise InvalidParamsError(message=f"pageToken {token[:40]!r} is not one this server gave")
    return int(token)
