"""The `a2a-sdk` agent executor over the service's own runs (`Runs.start` + `follow`).

The context id is a session of the caller's, the task one reply (with its resumptions):
a new task starts a reply with the message, a message on an `input-required` task answers
its pause. The reply runs like any other (same leases, event log, saves), so a task paused
on one worker is answered on another.
"""

from __future__ import annotations

import re

from a2a.helpers.proto_helpers import new_task_from_user_message
from a2a.server.agent_execution import AgentExecutor, RequestContext
from a2a.server.events import EventQueue
from a2a.server.tasks import TaskUpdater
from a2a.types.a2a_pb2 import TaskState
from a2a.utils.errors import InvalidParamsError

from tether.app.server._a2a_events import A2ATranslator
from tether.app.server._a2a_input import run_input, waiting
from tether.app.server._a2a_store import SessionTaskStore
from tether.app.server._context import Service
from tether.app.server._runs import SessionRef
from tether.app.server._stream import follow
from tether.app.storage import LogKey
from tether.errors import SessionConflictError, SessionNotFoundError, TetherError
from tether.event import EventType, UserInterruptEvent, event_adapter
from tether.state import AgentState

__all__ = ["TetherExecutor", "context_session", "stop_context"]

_ENDING = {
    EventType.REPLY_END,
    EventType.ERROR,
    EventType.REQUIRE_USER_CONFIRM,
    EventType.REQUIRE_EXTERNAL_EXECUTION,
}
_CONTEXT_ID = re.compile(r"^[A-Za-z0-9._~:@-]{1,200}$")


class TetherExecutor(AgentExecutor):
    """Runs A2A tasks as replies of the served agent `agent_id`."""

    def __init__(self, service: Service, agent_id: str, store: SessionTaskStore) -> None:
        self.service = service
        self.agent_id = agent_id
        self.store = store
        self.canceling: set[str] = set()
        """Tasks being canceled here: their runs end without a final update of theirs."""

    async def execute(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Start (or resume) the reply and publish its events as task updates."""
        message = context.message
        task_id, context_id = context.task_id, context.context_id
        if context.current_task is not None:
            context_id = context.current_task.context_id
        if message is None or task_id is None or context_id is None:
            raise InvalidParamsError(message="a message with task and context ids is needed")
        user = context.call_context.user.user_name
        resuming = context.current_task is not None  # else the handler checked no task waits
        ref, state = await context_session(
            self.service, user, self.agent_id, context_id, load=resuming
        )
        try:
            inputs = run_input(message, state, resuming=resuming)
        except TetherError as exc:
            raise InvalidParamsError(message=str(exc)) from None
        if ref is None:
            ref = await _create(self.service, user, self.agent_id, context_id)
        if context.current_task is None:
            await event_queue.enqueue_event(new_task_from_user_message(message))
        updater = TaskUpdater(event_queue, task_id, context_id)
        await updater.start_work()
        translator = A2ATranslator(updater)
        try:
            lease = await self.service.runs.start(ref, inputs)
        except TetherError as exc:
            await translator.fail(f"{type(exc).__name__}: {exc}")
            return
        runs = self.service.runs
        async for batch in follow(runs.events, ref.key, lease.start_seq, token=lease.token):
            for entry in batch:
                event = event_adapter.validate_json(entry.data)
                if event.type in _ENDING and await self._canceled(context, task_id):
                    return  # the cancel ends the task
                await translator.put(event)
            await translator.flush()
        if not translator.finished:
            await translator.fail("RunLost: the run ended without an outcome; send it again")

    async def _canceled(self, context: RequestContext, task_id: str) -> bool:
        """The task is being canceled here, or was canceled from another worker."""
        if task_id in self.canceling:
            return True
        stored = await self.store.get(task_id, context.call_context)
        return stored is not None and stored.status.state == TaskState.TASK_STATE_CANCELED

    async def cancel(self, context: RequestContext, event_queue: EventQueue) -> None:
        """Interrupt the running reply; the task ends as canceled."""
        if context.task_id and context.context_id:
            user = context.call_context.user.user_name
            await stop_context(self.service, SessionRef(user, self.agent_id, context.context_id))
            await TaskUpdater(event_queue, context.task_id, context.context_id).cancel()


async def context_session(
    service: Service, user: str, agent_id: str, context_id: str, *, load: bool = True
) -> tuple[SessionRef | None, AgentState]:
    """The caller's session of the context and its state; `None` for a new context.

    Without `load`, the state is a fresh one (for a context with no task waiting for
    input: its state need not be read).

    Raises:
        InvalidParamsError: the id is malformed, or names a session of another agent.
    """
    if not _CONTEXT_ID.match(context_id):
        raise InvalidParamsError(
            message=f"contextId {context_id[:40]!r} is not a valid id: use 1-200 letters, "
            "digits or `._~:@-`"
        )
    try:
        ref = await service.find(user, context_id)
    except SessionNotFoundError:
        return None, AgentState()
    if ref.agent_id != agent_id:
        raise InvalidParamsError(
            message=str(
                SessionConflictError(
                    f"context {context_id!r} belongs to agent {ref.agent_id!r}; use a new "
                    f"contextId for agent {agent_id!r}"
                )
            )
        )
    if not load:
        return ref, AgentState()
    record = await service.runs.storage.get_session(*ref.ids)
    return ref, record.state if record is not None else AgentState()


async def stop_context(service: Service, ref: SessionRef) -> None:
    """Stop the context's reply: interrupt it if it runs, abort its pause if it waits."""
    runs = service.runs
    if await runs.events.active(ref.key) is not None:
        await runs.interrupt(ref.key)
        return
    record = await runs.storage.get_session(*ref.ids)
    if record is None or record.state.reply is None or waiting(record.state) == ([], []):
        return
    abort = UserInterruptEvent(reply_id=record.state.reply.reply_id)
    try:
        lease = await runs.start(ref, abort)
    except TetherError:
        return  # started meanwhile, or gone: nothing paused to abort
    async for _ in follow(runs.events, ref.key, lease.start_seq, token=lease.token):
        pass


async def _create(service: Service, user: str, agent_id: str, context_id: str) -> SessionRef:
    runs = service.runs
    await runs.storage.upsert_session(user, agent_id, context_id, metadata={"a2a": True})
    await runs.events.bind(LogKey(user, context_id), agent_id)
    return SessionRef(user, agent_id, context_id)
