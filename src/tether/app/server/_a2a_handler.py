"""`a2a-sdk`'s request handler, with tether's checks before a message and on cancel.

A message the session cannot take (a bad answer to a pause, a context of another agent,
a new message on a context whose task waits for input) is refused with `InvalidParams`
before the SDK records anything: the task and the session stay as they were. Cancelling a
task interrupts its reply on whichever worker runs it, or aborts the pause it waits in.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator

from a2a.server.context import ServerCallContext
from a2a.server.events import Event
from a2a.server.request_handlers import DefaultRequestHandler
from a2a.types.a2a_pb2 import (
    AgentCard,
    CancelTaskRequest,
    Message,
    SendMessageRequest,
    Task,
    TaskState,
)
from a2a.utils.errors import InvalidParamsError, TaskNotFoundError

from tether.app.server._a2a_executor import TetherExecutor, context_session, stop_context
from tether.app.server._a2a_input import run_input
from tether.app.server._context import Service
from tether.app.server._runs import SessionRef
from tether.errors import TetherError
from tether.state import AgentState

__all__ = ["TetherRequestHandler"]

_ENDED = {
    TaskState.TASK_STATE_COMPLETED,
    TaskState.TASK_STATE_CANCELED,
    TaskState.TASK_STATE_FAILED,
    TaskState.TASK_STATE_REJECTED,
}


class TetherRequestHandler(DefaultRequestHandler):
    """The SDK's default handler for one served agent, checked against its sessions.

    Args:
        executor: Runs the agent's tasks (its service, agent id and task store are used).
        card: The agent's card (the handler reads its capabilities).
        parked: Seconds a task waiting for input stays in memory.
    """

    def __init__(self, executor: TetherExecutor, card: AgentCard, *, parked: float) -> None:
        super().__init__(
            agent_executor=executor,
            task_store=executor.store,
            agent_card=card,
            interrupted_task_timeout=parked,
        )
        self.executor = executor
        self.service: Service = executor.service
        self.agent_id = executor.agent_id

    async def on_message_send(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> Message | Task:
        """Check the message against the session, then send it."""
        await self._check(params, context)
        result: Message | Task = await super().on_message_send(params, context)
        return result

    async def on_message_send_stream(
        self, params: SendMessageRequest, context: ServerCallContext
    ) -> AsyncGenerator[Event, None]:
        """Check the message against the session, then stream its task."""
        await self._check(params, context)
        async for event in super().on_message_send_stream(params, context):
            yield event

    async def on_cancel_task(
        self, params: CancelTaskRequest, context: ServerCallContext
    ) -> Task | None:
        """Stop the task's reply (here or on another worker), then cancel the task."""
        task = await self.executor.store.get(params.id, context)
        if task is not None and task.status.state not in _ENDED:
            self.executor.canceling.add(task.id)
            user = context.user.user_name
            await stop_context(self.service, SessionRef(user, self.agent_id, task.context_id))
        try:
            result: Task | None = await super().on_cancel_task(params, context)
            return result
        finally:
            if task is not None:
                self.executor.canceling.discard(task.id)

    async def _check(self, params: SendMessageRequest, context: ServerCallContext) -> None:
        message = params.message
        user = context.user.user_name
        context_id = message.context_id or None
        resuming = False
        if message.task_id:
            task = await self.executor.store.get(message.task_id, context)
            if task is None:
                raise TaskNotFoundError(f"you have no task {message.task_id!r}")
            if task.status.state in _ENDED:
                return  # the SDK refuses it, with its own error
            if message.context_id and message.context_id != task.context_id:
                raise InvalidParamsError(
                    message=f"task {task.id!r} is in context {task.context_id!r}, not "
                    f"{message.context_id!r}: drop contextId or send the task's"
                )
            context_id, resuming = task.context_id, True
            message.context_id = context_id  # else the SDK would make up a new one
        state = AgentState()
        if context_id is not None:
            load = resuming or await self.executor.store.waiting(user, context_id)
            ref, state = await context_session(
                self.service, user, self.agent_id, context_id, load=load
            )
            if ref is not None and await self.service.runs.events.active(ref.key) is not None:
                raise InvalidParamsError(
                    message=f"context {context_id!r} is running a reply: wait until its task "
                    "ends (GetTask) or cancel it, then send again"
                )
        try:
            run_input(message, state, resuming=resuming)
        except TetherError as exc:
            raise InvalidParamsError(message=str(exc)) from None
